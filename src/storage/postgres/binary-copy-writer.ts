/*
 * PostgreSQL's binary `COPY` format (https://www.postgresql.org/docs/current/sql-copy.html,
 * "Binary Format"), written into one growing buffer: the signature and header, each tuple as its
 * field count and each field as a length (-1 for NULL) and its binary send form, the trailer.
 * Arrays are one-dimensional with lower bound 1 (array_send's form); their element type must be
 * the column's, which the server checks.
 */

import { viewOf } from '../../events/scan/slab-writer';

/** Type OIDs of the array elements written here (pg_type). */
export const ELEMENT_OID = { int8: 20, text: 25, float8: 701, uuid: 2950 } as const;

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
/**
 * Buffer's `copy`, loaded once: looked up on a Buffer in optimized code, a Buffer method is a
 * generic property load on every call (see `SlabWriter.view`), which is also why numbers are
 * written through a DataView of the buffer.
 */
const { copy } = Buffer.prototype;
const TWO_32 = 0x1_0000_0000;
/** Fields up to this many bytes are copied by a loop (bytes). */
const SHORT_COPY = 32;

export class BinaryCopyWriter {
  private buffer: Buffer;
  /** `buffer` as a DataView: its big-endian numbers. */
  private view: DataView;
  private length = 0;
  private arrayStart = -1;
  private arrayElements = 0;
  private arrayHasNull = false;

  constructor(expectedBytes: number) {
    this.buffer = Buffer.allocUnsafe(Math.max(64, expectedBytes));
    this.view = viewOf(this.buffer);
    this.bytes(SIGNATURE);
    this.int32(0); // flags
    this.int32(0); // header extension length
  }

  private room(n: number): void {
    if (this.length + n <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + n));
    copy.call(this.buffer, grown, 0, 0, this.length);
    this.buffer = grown;
    this.view = viewOf(grown);
  }

  private int32(n: number): void {
    this.room(4);
    this.view.setInt32(this.length, n);
    this.length += 4;
  }

  private bytes(b: Buffer, start = 0, end = b.length): void {
    this.room(end - start);
    copy.call(b, this.buffer, this.length, start, end);
    this.length += end - start;
  }

  /** Starts a tuple of `fields` fields. */
  tuple(fields: number): void {
    this.room(2);
    this.view.setInt16(this.length, fields);
    this.length += 2;
  }

  /** A NULL field or array element. */
  null(): void {
    this.int32(-1);
    if (this.arrayStart >= 0) this.arrayHasNull = true;
  }

  /** A bigint field or element; `n` a safe integer. */
  int8(n: number): void {
    this.room(12);
    const v = this.view;
    v.setInt32(this.length, 8);
    // Floor division keeps the two's-complement split right for negative numbers.
    const high = Math.floor(n / TWO_32);
    v.setInt32(this.length + 4, high);
    v.setUint32(this.length + 8, n - high * TWO_32);
    this.length += 12;
  }

  /** A bigint field or element beyond the safe integers. */
  bigInt8(n: bigint): void {
    this.room(12);
    this.view.setInt32(this.length, 8);
    this.view.setBigInt64(this.length + 4, n);
    this.length += 12;
  }

  /** A double precision field or element. */
  float8(n: number): void {
    this.room(12);
    this.view.setInt32(this.length, 8);
    this.view.setFloat64(this.length + 4, n);
    this.length += 12;
  }

  /** A text field or element: UTF-8 bytes `b[start, end)`. */
  text(b: Buffer, start: number, end: number): void {
    this.int32(end - start);
    this.field(b, start, end);
  }

  /** A field written already: bytes `b[start, end)`, its length and send form. */
  field(b: Buffer, start: number, end: number): void {
    const n = end - start;
    if (n > SHORT_COPY) return this.bytes(b, start, end);
    // Buffer#copy costs more than a short loop.
    this.room(n);
    const target = this.buffer;
    let o = this.length;
    for (let k = start; k < end; k++) target[o++] = b[k] as number;
    this.length = o;
  }

  /** An element of the open array written already: bytes `b[start, end)`, its length and send form. */
  elementField(b: Buffer, start: number, end: number): void {
    // A NULL's length is -1: its first byte has the sign bit.
    if ((b[start] as number) >= 0x80) this.arrayHasNull = true;
    this.field(b, start, end);
    this.arrayElements++;
  }

  /**
   * Room for a field or element of `n` bytes, written by the caller into `target` from the
   * returned offset (before any other call).
   */
  reserve(n: number): number {
    this.int32(n);
    this.room(n);
    const offset = this.length;
    this.length += n;
    return offset;
  }

  /** The buffer `reserve`'s offset is in. */
  get target(): Buffer {
    return this.buffer;
  }

  /** Gives back the unused end of the last `reserve`: the field is `used` bytes long. */
  shrinkLast(reservedAt: number, reserved: number, used: number): void {
    this.view.setInt32(reservedAt - 4, used);
    this.length -= reserved - used;
  }

  /** Starts an array field of elements of type `oid`; its elements follow, then `endArray`. */
  startArray(oid: number): void {
    this.room(24);
    const v = this.view;
    this.arrayStart = this.length;
    // Field length and has-null flag are filled in by endArray.
    v.setInt32(this.length + 4, 1); // dimensions
    v.setInt32(this.length + 8, 0);
    v.setInt32(this.length + 12, oid);
    v.setInt32(this.length + 20, 1); // lower bound
    this.length += 24;
    this.arrayElements = 0;
    this.arrayHasNull = false;
  }

  /** Counts one element of the open array (call once per element written). */
  element(): void {
    this.arrayElements++;
  }

  endArray(): void {
    const v = this.view;
    const start = this.arrayStart;
    v.setInt32(start, this.length - start - 4);
    v.setInt32(start + 8, this.arrayHasNull ? 1 : 0);
    v.setInt32(start + 16, this.arrayElements);
    this.arrayStart = -1;
  }

  /** The stream with its trailer; the writer is not used after. */
  finish(): Buffer {
    this.room(2);
    this.view.setInt16(this.length, -1);
    this.length += 2;
    return this.buffer.subarray(0, this.length);
  }
}
