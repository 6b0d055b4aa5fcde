import { SERIES_ROW_VARIANTS, seriesIds } from '../../bench/series-row-variants';
import type { StorageVariant } from '../../bench/storage-variants';
import { telemetryEvents } from '../../bench/telemetry-events';

const samples = telemetryEvents(1_000, 13).filter((e) => e.type === 'metric');
const batches = [samples.slice(0, 200), samples.slice(200, 400), samples.slice(400)];
const [written, known] = SERIES_ROW_VARIANTS as [StorageVariant, StorageVariant];

/** The series ids a transaction's or setup's `series` COPY writes. */
function seriesWritten(copies: readonly { table: string; payload: Buffer }[]): number[] {
  return copies
    .filter((c) => c.table === 'series')
    .flatMap((c) => c.payload.toString().trimEnd().split('\n'))
    .map((line) => Number(line.split('\t')[0]));
}

describe('narrow rows with a series table', () => {
  it('numbers series 1, 2, … in the order they are first seen', () => {
    const a = { ...(samples[0] as (typeof samples)[0]), attributes: { k: 'a' } };
    const b = { ...a, attributes: { k: 'b' } };
    expect([...seriesIds([a, b, a, { ...b }]).values()]).toEqual([1, 2]);
  });

  it('writes each series once, in the first transaction with a sample of it, before the rows', () => {
    const ids = seriesIds(samples);
    const txs = written.writes(batches);
    const perTx = txs.map((tx) => seriesWritten(tx.copies));
    expect(perTx.flat().sort((x, y) => x - y)).toEqual([...ids.values()]);
    for (const tx of txs) expect(tx.copies[tx.copies.length - 1]?.table).toBe('t');
    expect(perTx[0]?.length).toBeGreaterThan(0);
  });

  it('with every series known, writes them all in the setup and none in the transactions', () => {
    const ids = seriesIds(samples);
    expect(seriesWritten(known.setup?.(samples).copies ?? []).sort((x, y) => x - y)).toEqual([
      ...ids.values(),
    ]);
    for (const tx of known.writes(batches)) expect(seriesWritten(tx.copies)).toEqual([]);
  });
});
