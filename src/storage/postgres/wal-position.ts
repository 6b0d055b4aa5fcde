/**
 * Positions in PostgreSQL's write-ahead log (`pg_lsn`, written `X/Y` in hexadecimal), as bigint so
 * two positions compare exactly.
 */

/** Parses `X/Y` as PostgreSQL writes a `pg_lsn`. */
export function parseLsn(text: string): bigint {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text);
  if (match === null) throw new RangeError(`not a WAL position: ${JSON.stringify(text)}`);
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

/** Writes a position as PostgreSQL does (`X/Y`, upper-case hexadecimal). */
export function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** WAL page size (`wal_block_size`, bytes): PostgreSQL's default, which a build rarely changes. */
const WAL_PAGE_BYTES = 8192n;
/** WAL segment size (`wal_segment_size`, bytes): the `initdb` default. */
const WAL_SEGMENT_BYTES = 16n * 1024n * 1024n;
/** Header of a WAL page (SizeOfXLogShortPHD) and of a segment's first page (SizeOfXLogLongPHD), bytes. */
const SHORT_PAGE_HEADER = 24n;
const LONG_PAGE_HEADER = 40n;

/**
 * The position a standby must have replayed to hold everything written before `insertLsn` (from
 * `pg_current_wal_insert_lsn()` after a commit). When the last record ended at a page boundary, the
 * insert position points past the next page's header, while a standby's replay position stops at
 * the boundary: without this step a standby that holds the commit would wait for a later record
 * (which an idle primary may not write for seconds).
 */
export function replayTarget(insertLsn: bigint): bigint {
  if (insertLsn % WAL_SEGMENT_BYTES === LONG_PAGE_HEADER) return insertLsn - LONG_PAGE_HEADER;
  // A segment's first page has the long header: 24 bytes into it is inside that header, no end.
  const firstPage = insertLsn % WAL_SEGMENT_BYTES < WAL_PAGE_BYTES;
  if (!firstPage && insertLsn % WAL_PAGE_BYTES === SHORT_PAGE_HEADER) return insertLsn - SHORT_PAGE_HEADER;
  return insertLsn;
}
