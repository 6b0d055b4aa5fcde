import { columnBlockCopy, sampleKeyCopy } from '../../bench/sample-blocks';
import { telemetryEvents } from '../../bench/telemetry-events';
import { arrayElements, copyTuples } from '../../support/binary-copy-read';

const uuidText = (b: Buffer): string =>
  b.toString('hex').replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');

// Spread over several minutes, so blocks of one app and name differ by their minute.
const samples = telemetryEvents(600, 11)
  .filter((e) => e.type === 'metric')
  .map((e, i) => ({ ...e, ts: 1_764_892_800_000 + i * 1_733 }));

describe('sample blocks', () => {
  it('writes one key row (ts, id) per sample, in the samples’ order', () => {
    const rows = copyTuples(sampleKeyCopy(samples));
    expect(rows.map(([ts, id]) => [Number(ts?.readBigInt64BE()), uuidText(id as Buffer)])).toEqual(
      samples.map((e) => [e.ts, e.id]),
    );
  });

  it('puts every sample in exactly one block, of its own app, name and minute', () => {
    const groupSize = 100;
    const rows = copyTuples(columnBlockCopy(samples, groupSize));
    const seen = new Map<string, string>();
    for (const [bucket, firstId, app, name, , , ids, ts] of rows) {
      const idList = arrayElements(ids as Buffer).map(uuidText);
      const tsList = arrayElements(ts as Buffer).map((b) => Number(b.readBigInt64BE()));
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
