import { encodeAttributes } from '../../../src/storage/layout/rows';
import { seriesBlocks } from '../../bench/series-block-variants';
import { tagsOnlySamples } from '../../bench/tags-only-samples';
import { telemetryEvents } from '../../bench/telemetry-events';

const samples = telemetryEvents(1_000, 17).filter((e) => e.type === 'metric');
const batches = [samples.slice(0, 200), samples.slice(200, 400), samples.slice(400)];

/** The series (app, name, attributes) each `INSERT INTO metric_series` of `statements` writes. */
function seriesInserted(statements: readonly string[] | undefined): number {
  return (statements ?? [])
    .filter((sql) => sql.startsWith('INSERT INTO metric_series'))
    .map((sql) => (sql.match(/'\{(.*?)\}'::text\[\]/s)?.[1] ?? '').split('","').length)
    .reduce((a, b) => a + b, 0);
}

describe('series blocks (storage-cost variants)', () => {
  it('inserts each series once, before the blocks of the first transaction with a sample of it', () => {
    const distinct = new Set(samples.map((e) => `${e.app} ${e.name} ${encodeAttributes(e.attributes)}`));
    const txs = seriesBlocks('v', 'bench', false).writes(batches);
    expect(txs.map((tx) => seriesInserted(tx.before)).reduce((a, b) => a + b, 0)).toBe(distinct.size);
    for (const tx of txs) expect(tx.copies.map((c) => c.table.split(' ')[0])).toEqual(['t']);
  });

  it('with every series known, inserts them all in the setup and none in the transactions', () => {
    const variant = seriesBlocks('v', 'bench', true);
    const distinct = new Set(samples.map((e) => `${e.app} ${e.name} ${encodeAttributes(e.attributes)}`));
    expect(seriesInserted(variant.setup?.(samples).before)).toBe(distinct.size);
    for (const tx of variant.writes(batches)) expect(tx.before).toEqual([]);
  });
});

describe('tags-only samples', () => {
  it('are the influx suite’s points: one name, an app, a route and a browser, at most 144 series', () => {
    const points = tagsOnlySamples(2_000, 5);
    expect(points).toHaveLength(2_000);
    expect(new Set(points.map((e) => `${e.type} ${e.name}`))).toEqual(new Set(['metric render_frame_drop']));
    const series = new Set(points.map((e) => `${e.app} ${encodeAttributes(e.attributes)}`));
    expect(series.size).toBeLessThanOrEqual(144);
    for (const e of points) expect(Object.keys(e.attributes).sort()).toEqual(['browser', 'route']);
  });
});
