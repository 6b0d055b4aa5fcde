import { columnBlockCopy, sampleKeyCopy } from '../../bench/sample-blocks';
import { telemetryEvents } from '../../bench/telemetry-events';

/** The tuples of a binary COPY stream, each a list of fields (null for NULL). */
function tuples(stream: Buffer): (Buffer | null)[][] {
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

/** The elements of a one-dimensional binary array. */
function elements(array: Buffer): Buffer[] {
  const n = array.readInt32BE(12);
  const out: Buffer[] = [];
  let at = 20;
  for (let i = 0; i < n; i++) {
    const length = array.readInt32BE(at);
    out.push(array.subarray(at + 4, at + 4 + length));
    at += 4 + length;
  }
  return out;
}

const uuidText = (b: Buffer): string =>
  b.toString('hex').replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');

// Spread over several minutes, so blocks of one app and name differ by their minute.
const samples = telemetryEvents(600, 11)
  .filter((e) => e.type === 'metric')
  .map((e, i) => ({ ...e, ts: 1_764_892_800_000 + i * 1_733 }));

describe('sample blocks', () => {
  it('writes one key row (ts, id) per sample, in the samples’ order', () => {
    const rows = tuples(sampleKeyCopy(samples));
    expect(rows.map(([ts, id]) => [Number(ts?.readBigInt64BE()), uuidText(id as Buffer)])).toEqual(
      samples.map((e) => [e.ts, e.id]),
    );
  });

  it('puts every sample in exactly one block, of its own app, name and minute', () => {
    const groupSize = 100;
    const rows = tuples(columnBlockCopy(samples, groupSize));
    const seen = new Map<string, string>();
    for (const [bucket, firstId, app, name, , , ids, ts] of rows) {
      const idList = elements(ids as Buffer).map(uuidText);
      const tsList = elements(ts as Buffer).map((b) => Number(b.readBigInt64BE()));
      expect(idList[0]).toBe(uuidText(firstId as Buffer));
      for (const [i, id] of idList.entries()) {
        expect(seen.has(id)).toBe(false);
        seen.set(
          id,
          `${app?.toString()} ${name?.toString()} ${Number(bucket?.readBigInt64BE())} ${tsList[i]}`,
        );
      }
    }
    expect(seen.size).toBe(samples.length);
    for (const e of samples)
      expect(seen.get(e.id)).toBe(`${e.app} ${e.name} ${e.ts - (e.ts % 60_000)} ${e.ts}`);
  });
});
