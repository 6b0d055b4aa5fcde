import type { TelemetryEvent } from '../../src/events/types';
import { encodeAttributes } from '../../src/storage/layout/rows';
import { seriesBlocks } from '../bench/series-block-variants';
import { BATCH_SAMPLES } from '../bench/storage-variants';
import { telemetryEvents } from '../bench/telemetry-events';
import { useVariantSchema, writeTransaction } from '../support/variant-schema';

/**
 * The storage-cost suite's series-dictionary variants (docs/metric-storage.md, "A series
 * dictionary"): every sample's series id, as the variant writes it, names a series of the sample's
 * own app, name and attributes, in PostgreSQL, whatever the attributes hold; two apps with the same
 * name and attributes have two series.
 */

// Attributes that an SQL or array literal must quote, and the same series under two apps.
const tricky = [`it's`, 'a "quoted", {braced} value', 'back\\slash', 'ünïcode ✓', ''];
const bench = telemetryEvents(3_000, 43).filter((e) => e.type === 'metric');
const samples: TelemetryEvent[] = bench.map((e, i) => {
  if (i % 7 !== 0) return e;
  return {
    ...e,
    app: i % 2 === 0 ? 'app-a' : 'app-b',
    name: 'shared.name',
    attributes: { note: tricky[(i / 7) % tricky.length] as string },
  };
});
const batches = [samples.slice(0, BATCH_SAMPLES), samples.slice(BATCH_SAMPLES)];

describe('storage-cost series blocks', () => {
  const schema = useVariantSchema('storage_cost_series');

  it.each([
    ['new series inserted with the blocks', false],
    ['every series known before', true],
  ] as const)('%s: each sample names its own series', async (_name, known) => {
    const variant = seriesBlocks('series blocks', 'bench', known);
    await schema.inSchema(variant);
    const client = schema.client();
    if (variant.setup) await writeTransaction(client, variant.setup(samples));
    for (const tx of variant.writes(batches)) await writeTransaction(client, tx);
    const { rows } = await client.query<{ id: string; app: string; name: string; attributes: string }>(
      `SELECT s.id, m.app, m.name, m.attributes
       FROM t, unnest(t.ids, t.series) AS s (id, series) JOIN metric_series m ON m.id = s.series`,
    );
    const stored = new Map(rows.map((r) => [r.id, `${r.app} ${r.name} ${r.attributes}`]));
    expect(stored.size).toBe(samples.length);
    for (const e of samples)
      expect(stored.get(e.id)).toBe(`${e.app} ${e.name} ${encodeAttributes(e.attributes)}`);
    const shared = await client.query<{ app: string; n: string }>(
      `SELECT app, count(*) AS n FROM metric_series WHERE name = 'shared.name' GROUP BY app ORDER BY app`,
    );
    expect(shared.rows).toEqual([
      { app: 'app-a', n: String(tricky.length) },
      { app: 'app-b', n: String(tricky.length) },
    ]);
  });
});
