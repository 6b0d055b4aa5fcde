/**
 * PostgreSQL's binary `COPY` format (https://www.postgresql.org/docs/current/sql-copy.html, "Binary
 * Format"), for the few types the storage-cost suite writes: a stream is the signature, a tuple
 * count per row, each field as a length and its binary send form, and a trailer.
 */

import { ELEMENT_OID } from '../../src/storage/postgres/binary-copy-writer';

/** Type OIDs of the array elements written here (pg_type): the writer's own. */
export const OID = ELEMENT_OID;

/** A field of a binary tuple: bytes already in send form, or NULL. */
export type BinaryField = Buffer | null;

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

export function int8(n: number): Buffer {
  const b = Buffer.allocUnsafe(8);
  b.writeBigInt64BE(BigInt(n));
  return b;
}

export function float8(n: number): Buffer {
  const b = Buffer.allocUnsafe(8);
  b.writeDoubleBE(n);
  return b;
}

export function text(s: string): Buffer {
  return Buffer.from(s, 'utf8');
}

export function uuid(s: string): Buffer {
  return Buffer.from(s.replace(/-/g, ''), 'hex');
}

/** A one-dimensional array (lower bound 1) of elements of type `oid`; a null element is NULL. */
export function array(oid: number, elements: readonly BinaryField[]): Buffer {
  const hasNull = elements.some((e) => e === null) ? 1 : 0;
  const head = Buffer.allocUnsafe(20);
  head.writeInt32BE(1, 0);
  head.writeInt32BE(hasNull, 4);
  head.writeInt32BE(oid, 8);
  head.writeInt32BE(elements.length, 12);
  head.writeInt32BE(1, 16);
  const parts: Buffer[] = [head];
  for (const e of elements) {
    const length = Buffer.allocUnsafe(4);
    length.writeInt32BE(e === null ? -1 : e.length);
    parts.push(length);
    if (e !== null) parts.push(e);
  }
  return Buffer.concat(parts);
}

/** A whole binary COPY stream of `rows`, each a list of fields in column order. */
export function binaryCopy(rows: readonly (readonly BinaryField[])[]): Buffer {
  const header = Buffer.alloc(8);
  const parts: Buffer[] = [SIGNATURE, header];
  for (const row of rows) {
    const count = Buffer.allocUnsafe(2);
    count.writeInt16BE(row.length);
    parts.push(count);
    for (const field of row) {
      const length = Buffer.allocUnsafe(4);
      length.writeInt32BE(field === null ? -1 : field.length);
      parts.push(length);
      if (field !== null) parts.push(field);
    }
  }
  const trailer = Buffer.allocUnsafe(2);
  trailer.writeInt16BE(-1);
  parts.push(trailer);
  return Buffer.concat(parts);
}
