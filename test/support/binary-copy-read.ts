/**
 * Reads back PostgreSQL's binary `COPY` format (https://www.postgresql.org/docs/current/sql-copy.html,
 * "Binary Format") in tests, independently of the writers: a stream's tuples and an array's elements.
 */

/** The tuples of a binary COPY stream, each a list of fields (null for NULL). */
export function copyTuples(stream: Buffer): (Buffer | null)[][] {
  expect(stream.subarray(0, 11).toString('latin1')).toBe('PGCOPY\n\xff\r\n\0');
  let at = 15 + 4 + stream.readInt32BE(15);
  const out: (Buffer | null)[][] = [];
  for (;;) {
    const count = stream.readInt16BE(at);
    at += 2;
    if (count === -1) break;
    const row: (Buffer | null)[] = [];
    for (let i = 0; i < count; i++) {
      const length = stream.readInt32BE(at);
      at += 4;
      row.push(length < 0 ? null : stream.subarray(at, at + length));
      if (length > 0) at += length;
    }
    out.push(row);
  }
  expect(at).toBe(stream.length);
  return out;
}

/** The elements of a one-dimensional binary array (NULL elements as empty). */
export function arrayElements(array: Buffer): Buffer[] {
  const n = array.readInt32BE(12);
  const out: Buffer[] = [];
  let at = 20;
  for (let i = 0; i < n; i++) {
    const length = array.readInt32BE(at);
    out.push(array.subarray(at + 4, at + 4 + Math.max(0, length)));
    at += 4 + Math.max(0, length);
  }
  return out;
}
