import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { TelemetryEvent } from '../../src/events/types';
import { encodeAttributes } from '../../src/storage/layout/rows';
import { seriesBlocks } from '../bench/series-block-variants';
import { BATCH_SAMPLES, type StorageVariant, type TransactionWrites } from '../bench/storage-variants';
import { telemetryEvents } from '../bench/telemetry-events';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/**
 * The storage-cost suite's series-dictionary variants (docs/metric-storage.md, "A series
 * dictionary"): every sample's series id, as the variant writes it, names a series of the sample's
 * own app, name and attributes, in PostgreSQL, whatever the attributes hold; two apps with the same
 * name and attributes have two series.
 */

function copy(client: pg.Client, table: string, format: string, payload: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = client.query(copyFrom(`COPY ${table} FROM STDIN${format}`));
    stream.on('error', reject);
    stream.on('finish', () => resolve());
    stream.end(payload);
  });
}

async function write(client: pg.Client, tx: TransactionWrites): Promise<void> {
  await client.query('BEGIN');
  for (const sql of tx.before ?? []) await client.query(sql);
  for (const step of tx.copies) await copy(client, step.table, step.format, step.payload);
  for (const sql of tx.statements) await client.query(sql);
  await client.query('COMMIT');
}

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
  let db: TestDatabase;
  let client: pg.Client;

  beforeAll(async () => {
    db = await createTestDatabase('storage_cost_series');
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
  });

  afterAll(async () => {
    await client.end();
    await db.drop();
  });

  async function inSchema(variant: StorageVariant): Promise<void> {
    await client.query('DROP SCHEMA IF EXISTS v CASCADE; CREATE SCHEMA v; SET search_path = v');
    await client.query(`SET default_toast_compression = ${variant.compression}`);
    await client.query(variant.ddl);
  }

  it.each([
    ['new series inserted with the blocks', false],
    ['every series known before', true],
  ] as const)('%s: each sample names its own series', async (_name, known) => {
    const variant = seriesBlocks('series blocks', 'bench', known);
    await inSchema(variant);
    if (variant.setup) await write(client, variant.setup(samples));
    for (const tx of variant.writes(batches)) await write(client, tx);
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
