import pg from 'pg';
import type { TelemetryEvent } from '../../src/events/types';
import { KEYED_BLOCK_VARIANTS } from '../bench/keyed-block-variants';
import {
  BATCH_SAMPLES,
  BLOCK_VARIANTS,
  type StorageVariant,
  type TransactionWrites,
} from '../bench/storage-variants';
import { telemetryEvents } from '../bench/telemetry-events';
import { createTestDatabase } from '../support/postgres';
import { useVariantSchema, writeTransaction } from '../support/variant-schema';
import { openPostgresStorage, writeEvents } from '../support/storage';
import { mergeMetricBlocks } from '../../src/storage/postgres/metric-block-merge';

/**
 * The storage-cost suite's block variants against resends shaped as the SDK makes them
 * (docs/metric-storage.md): samples without the oldest ones (evicted after a requeue), the second
 * half (sendOnHide's split), the same samples with newer ones after them (take's re-batching).
 * Keyed variants refuse each, as the key table of migration 009 did; the block key alone takes the
 * second half as new samples. The collector's layout since migration 012 has no key: it stores
 * each resend, reads see each sample once, and the merge job leaves each stored once.
 */

const UNIQUE_VIOLATION = '23505';
/** The unkeyed design: column blocks keyed by (bucket, first_id) only. */
const BLOCK_KEY_ONLY = BLOCK_VARIANTS[BLOCK_VARIANTS.length - 1] as StorageVariant;

/** One transaction of `writes`; the error code when it failed, else null. */
async function write(client: pg.Client, writes: TransactionWrites): Promise<string | null> {
  try {
    await writeTransaction(client, writes);
    return null;
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
}

/** How many times each id is in the blocks of `t`. */
async function storedTimes(client: pg.Client): Promise<Map<string, number>> {
  const { rows } = await client.query<{ id: string; n: string }>(
    'SELECT id, count(*) AS n FROM t, unnest(ids) AS id GROUP BY id',
  );
  return new Map(rows.map((r) => [r.id, Number(r.n)]));
}

// One write batch of the suite (1,400 samples, about 47 a block): the resends are its samples
// resent in the SDK's shapes.
const all = telemetryEvents(3_000, 41).filter((e) => e.type === 'metric');
const batch = all.slice(0, BATCH_SAMPLES);
const newer = all.slice(BATCH_SAMPLES, BATCH_SAMPLES + 140);

const resends: ReadonlyArray<readonly [string, readonly TelemetryEvent[]]> = [
  ['of the batch without its oldest samples', batch.slice(3)],
  ['of its second half', batch.slice(Math.ceil(batch.length / 2))],
  ['of the batch with newer samples after it', [...batch, ...newer]],
];

describe('storage-cost block variants and resent samples', () => {
  const schema = useVariantSchema('storage_cost_keys');

  describe.each(KEYED_BLOCK_VARIANTS.map((v) => [v.name, v] as const))('%s', (_name, variant) => {
    it.each(resends)('refuses a resend %s, and stores each sample once', async (_shape, resent) => {
      await schema.inSchema(variant);
      const client = schema.client();
      const [first, again] = variant.writes([batch, resent]) as [TransactionWrites, TransactionWrites];
      expect(await write(client, first)).toBeNull();
      expect(await write(client, again)).toBe(UNIQUE_VIOLATION);
      const times = await storedTimes(client);
      expect(times.size).toBe(batch.length);
      for (const e of batch) expect(times.get(e.id)).toBe(1);
      const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM k');
      expect(Number(rows[0]?.n)).toBe(batch.length);
    });
  });

  it('a block key (bucket, first_id) alone takes the second half of a batch as new samples', async () => {
    await schema.inSchema(BLOCK_KEY_ONLY);
    const client = schema.client();
    // The second half's samples whose (app, name, minute) also has samples in the first half: a
    // group wholly in the second half would start its resent block with the same first id.
    const half = Math.ceil(batch.length / 2);
    const group = (e: TelemetryEvent): string => `${e.app}\u0000${e.name}\u0000${Math.floor(e.ts / 60_000)}`;
    const inFirstHalf = new Set(batch.slice(0, half).map(group));
    const secondHalf = batch.slice(half).filter((e) => inFirstHalf.has(group(e)));
    expect(secondHalf.length).toBeGreaterThan(batch.length / 4);
    const [first, again] = BLOCK_KEY_ONLY.writes([batch, secondHalf]) as [
      TransactionWrites,
      TransactionWrites,
    ];
    expect(await write(client, first)).toBeNull();
    expect(await write(client, again)).toBeNull();
    const times = await storedTimes(client);
    for (const e of secondHalf) expect(times.get(e.id)).toBe(2);
  });

  describe('merged blocks (migration 012, the collector writer)', () => {
    it.each(resends)(
      'stores a resend %s, reads each sample once, and merges it away',
      async (_shape, resent) => {
        const merged = await createTestDatabase('storage_cost_merged');
        const storage = openPostgresStorage(merged.url);
        const admin = new pg.Client({ connectionString: merged.url });
        try {
          await storage.migrate();
          await admin.connect();
          expect(await writeEvents(storage, batch)).toEqual({ inserted: batch.length });
          await writeEvents(storage, resent);
          const distinct = new Set([...batch, ...resent].map((e) => e.id)).size;
          const read = async () =>
            (
              await admin.query<{ n: string; ids: string }>(
                'SELECT count(*) AS n, count(DISTINCT id) AS ids FROM metric_samples WHERE bucket >= 0',
              )
            ).rows[0];
          expect(await read()).toEqual({ n: String(distinct), ids: String(distinct) });
          await admin.query('BEGIN');
          await mergeMetricBlocks(admin, {
            beforeMs: Number.MAX_SAFE_INTEGER,
            groupsPerStatement: 1000,
            maxGroups: 100_000,
            correctCounts: true,
          });
          await admin.query('COMMIT');
          const { rows } = await admin.query<{ n: string }>(
            'SELECT sum(cardinality(id)) AS n FROM metric_blocks',
          );
          expect(Number(rows[0]?.n)).toBe(distinct);
          expect(await read()).toEqual({ n: String(distinct), ids: String(distinct) });
        } finally {
          await admin.end();
          await storage.close();
          await merged.drop();
        }
      },
    );
  });
});
