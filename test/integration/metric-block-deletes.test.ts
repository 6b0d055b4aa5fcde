/**
 * Deleting metric samples stored as blocks (PostgreSQL, migrations 009 and 012): `deleteAppData`
 * and the purge of the default partitions remove a sample from its block, rebuild a block that
 * keeps other samples, and delete one left with none. Blocks are written here with SQL, as the
 * writer lays them out.
 */
import crypto from 'node:crypto';
import pg from 'pg';
import { deleteDefaultPartitionRowsBefore } from '../../src/storage/postgres/purge';
import type { PostgresStorage } from '../../src/storage/postgres';
import type { MetricSampleRow } from '../../src/storage/layout/rows';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { openPostgresStorage } from '../support/storage';

const MIN = 60_000;
/** 2025-03-01T10:00:00Z: a day with no partition, so its samples sit in the default partitions. */
const T = Date.UTC(2025, 2, 1, 10);
const HOUR = 60 * MIN;

/** A sample as a block holds it: a row of `metric_samples` but its block's app and name. */
type Sample = Omit<MetricSampleRow, 'app' | 'name'>;

/** A gauge at `ts`, or a summary when `ts` is odd, so every column has values and nulls. */
function sample(ts: number): Sample {
  const summary = ts % 2 === 1;
  return {
    id: crypto.randomUUID(),
    ts,
    version: summary ? null : `1.${ts % 7}`,
    env: summary ? 'prod' : null,
    value: summary ? null : ts / 1000,
    count: summary ? 3 : null,
    min: summary ? 1 : null,
    max: summary ? 5 : null,
    sum: summary ? 9 : null,
    message: summary ? `m${ts}` : null,
    attributes: JSON.stringify({ at: ts }),
  };
}

let db: TestDatabase;
let admin: pg.Client;
let storage: PostgresStorage;

/** One block of `samples` (all in one minute), as one write stores it. */
async function insertBlock(app: string, name: string, samples: readonly Sample[]): Promise<void> {
  const col = <K extends keyof Sample>(k: K) => samples.map((s) => s[k]);
  const bucket = samples[0]!.ts - (samples[0]!.ts % MIN);
  await admin.query('BEGIN');
  await admin.query(
    `INSERT INTO metric_blocks (bucket, app, name, id, ts, version, env, value, count, min, max, sum,
                                message, attributes)
     VALUES ($1, $2, $3, $4::uuid[], $5::bigint[], $6::text[], $7::text[], $8::float8[], $9::bigint[],
             $10::float8[], $11::float8[], $12::float8[], $13::text[], $14::text[])`,
    [
      bucket,
      app,
      name,
      col('id'),
      col('ts'),
      col('version'),
      col('env'),
      col('value'),
      col('count'),
      col('min'),
      col('max'),
      col('sum'),
      col('message'),
      col('attributes'),
    ],
  );
  await admin.query('COMMIT');
}

/** The app's samples through the `metric_samples` view, oldest first. */
async function viewed(app: string): Promise<Sample[]> {
  const { rows } = await admin.query(
    `SELECT id, ts::float8 AS ts, version, env, value, count::float8 AS count, min, max, sum, message,
            attributes
       FROM metric_samples WHERE app = $1 ORDER BY ts, id`,
    [app],
  );
  return rows as Sample[];
}

/** Every sample read, of every app, as `ts/id`. */
async function keys(): Promise<string[]> {
  const { rows } = await admin.query(`SELECT ts::text || '/' || id AS k FROM metric_samples ORDER BY 1`);
  return rows.map((r) => r.k as string);
}

const keyOf = (s: Sample) => `${s.ts}/${s.id}`;
const byTs = (a: Sample, b: Sample) => a.ts - b.ts || a.id.localeCompare(b.id);

/** The blocks of `app`: bucket, name and how many samples each holds. */
async function blocks(app: string): Promise<string[]> {
  const { rows } = await admin.query(
    `SELECT bucket::text || ' ' || name || ' ' || cardinality(id) AS b FROM metric_blocks
      WHERE app = $1 ORDER BY 1`,
    [app],
  );
  return rows.map((r) => r.b as string);
}

/** Every block's arrays have its sample count's elements (none left empty or ragged). */
async function blocksWellFormed(): Promise<boolean> {
  const { rows } = await admin.query(
    `SELECT bool_and(n > 0 AND n = cardinality(ts) AND n = cardinality(version) AND n = cardinality(env)
                     AND n = cardinality(value) AND n = cardinality(count) AND n = cardinality(min)
                     AND n = cardinality(max) AND n = cardinality(sum) AND n = cardinality(message)
                     AND n = cardinality(attributes)) AS ok
       FROM (SELECT cardinality(id) AS n, * FROM metric_blocks) b`,
  );
  return rows[0].ok !== false;
}

/** Samples read more than once (none: reads merge a group's copies). */
async function unmatched(): Promise<{ keys: number; samples: number }> {
  const { rows } = await admin.query(
    `SELECT 0 AS keys, count(*)::int AS samples FROM (
       SELECT ts, id FROM metric_samples GROUP BY ts, id HAVING count(*) > 1) d`,
  );
  return rows[0];
}

beforeAll(async () => {
  db = await createTestDatabase('metric_block_deletes');
  storage = openPostgresStorage(db.url);
  await storage.migrate();
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
});

afterAll(async () => {
  await admin?.end();
  await storage?.close();
  await db?.drop();
});

beforeEach(async () => {
  await admin.query(
    `TRUNCATE metric_blocks, events, metric_rollups_1m, metric_rollups_1h,
              metric_rollup_invalidations`,
  );
});

describe('deleting one sample by id (postgres blocks)', () => {
  it('removes it from a block of several, which keeps the others in order, and only its key', async () => {
    const kept = [sample(T + 1_000), sample(T + 2_001), sample(T + 3_000)];
    const gone = sample(T + 2_000);
    const block = [kept[0]!, gone, kept[1]!, kept[2]!];
    await insertBlock('a', 'cpu', block);
    const other = [sample(T + 2_000)];
    await insertBlock('b', 'cpu', other);
    for (const t of ['metric_rollups_1m', 'metric_rollups_1h']) {
      await admin.query(
        `INSERT INTO ${t} VALUES ('cpu', $1, 'a', 4, 1, 5, 9), ('cpu', $1, 'b', 1, 1, 1, 1)`,
        [t.endsWith('1m') ? T : T - (T % HOUR)],
      );
    }

    const deleted = await storage.deleteAppData({ app: 'a', scope: 'id', id: gone.id });

    expect(deleted).toEqual({ events: 0, metricSamples: 1, rollups1m: 1, rollups1h: 1, lossMapRows: 0 });
    expect(await viewed('a')).toEqual(kept);
    expect(await viewed('b')).toEqual(other);
    expect(await keys()).toEqual([...kept, ...other].map(keyOf).sort());
    expect(await blocks('a')).toEqual([`${T} cpu 3`]);
    const { rows } = await admin.query(
      'SELECT name, app, bucket::float8 AS bucket FROM metric_rollup_invalidations',
    );
    expect(rows).toEqual([{ name: 'cpu', app: 'a', bucket: T }]);
    expect(await blocksWellFormed()).toBe(true);
    expect(await unmatched()).toEqual({ keys: 0, samples: 0 });

    // Its key went with it: the same sample sent again is stored again, as a deleted row's was.
    await insertBlock('a', 'cpu', [gone]);
    expect(await viewed('a')).toEqual([...kept, gone].sort(byTs));
  });

  it('deletes the block of its only sample, with its key', async () => {
    const only = sample(T + 5_000);
    const neighbour = sample(T + 6_000);
    await insertBlock('a', 'cpu', [only]);
    await insertBlock('a', 'mem', [neighbour]);

    const deleted = await storage.deleteAppData({ app: 'a', scope: 'id', id: only.id });

    expect(deleted.metricSamples).toBe(1);
    expect(await blocks('a')).toEqual([`${T} mem 1`]);
    expect(await keys()).toEqual([keyOf(neighbour)]);
  });

  it('counts nothing for an id no sample of the app has', async () => {
    const s = sample(T);
    await insertBlock('a', 'cpu', [s]);
    const deleted = await storage.deleteAppData({ app: 'b', scope: 'id', id: s.id });
    expect(deleted).toEqual({ events: 0, metricSamples: 0, rollups1m: 0, rollups1h: 0, lossMapRows: 0 });
    expect(await viewed('a')).toEqual([s]);
    expect(await keys()).toEqual([keyOf(s)]);
  });
});

describe('deleting what is older than a time (postgres blocks)', () => {
  it('splits the block of the minute holding a bound inside it, and drops whole the earlier ones', async () => {
    const before = T + 10_500;
    const earlier = [sample(T - MIN + 1_000), sample(T - MIN + 59_999)];
    const straddling = [
      sample(T),
      sample(T + 5_001),
      sample(T + 10_499),
      sample(T + 10_500),
      sample(T + 30_001),
    ];
    const allOlder = [sample(T + 2_000), sample(T + 3_001)];
    const allNewer = [sample(T + 10_500), sample(T + 11_000)];
    const later = [sample(T + MIN + 1)];
    await insertBlock('a', 'cpu', earlier);
    await insertBlock('a', 'cpu', straddling);
    await insertBlock('a', 'mem', allOlder);
    await insertBlock('a', 'disk', allNewer);
    await insertBlock('a', 'cpu', later);
    const otherApp = [sample(T + 1_000)];
    await insertBlock('b', 'cpu', otherApp);

    const deleted = await storage.deleteAppData({ app: 'a', scope: 'before', before });

    expect(deleted.metricSamples).toBe(earlier.length + 3 + allOlder.length);
    const kept = [...straddling.slice(3), ...allNewer, ...later].sort(byTs);
    expect(await viewed('a')).toEqual(kept);
    expect(await viewed('b')).toEqual(otherApp);
    expect(await blocks('a')).toEqual([`${T} cpu 2`, `${T} disk 2`, `${T + MIN} cpu 1`].sort());
    expect(await keys()).toEqual([...kept, ...otherApp].map(keyOf).sort());
    expect(await blocksWellFormed()).toBe(true);
    expect(await unmatched()).toEqual({ keys: 0, samples: 0 });
    // The series with samples in the bound's hour before it are refolded from the bound's minute.
    const { rows } = await admin.query(
      'SELECT DISTINCT name, app, bucket::float8 AS bucket FROM metric_rollup_invalidations ORDER BY name',
    );
    expect(rows).toEqual([
      { name: 'cpu', app: 'a', bucket: T },
      { name: 'mem', app: 'a', bucket: T },
    ]);
  });

  it('drops whole blocks only when the bound is a minute', async () => {
    const older = [sample(T - 2 * MIN), sample(T - MIN + 1)];
    const newer = [sample(T), sample(T + 59_999)];
    await insertBlock('a', 'cpu', older);
    await insertBlock('a', 'cpu', newer);

    const deleted = await storage.deleteAppData({ app: 'a', scope: 'before', before: T });

    expect(deleted.metricSamples).toBe(2);
    expect(await viewed('a')).toEqual(newer);
    expect(await keys()).toEqual(newer.map(keyOf).sort());
  });
});

describe('deleting all of an app (postgres blocks)', () => {
  it('counts samples, not blocks, and removes their keys', async () => {
    await insertBlock('a', 'cpu', [sample(T), sample(T + 1), sample(T + 2)]);
    await insertBlock('a', 'mem', [sample(T + MIN)]);
    const other = [sample(T)];
    await insertBlock('b', 'cpu', other);

    const deleted = await storage.deleteAppData({ app: 'a', scope: 'all' });

    expect(deleted.metricSamples).toBe(4);
    expect(await blocks('a')).toEqual([]);
    expect(await keys()).toEqual(other.map(keyOf));
  });
});

describe('purging the default partitions (postgres blocks)', () => {
  const DAY = 24 * HOUR;
  const DAY1 = Date.UTC(2025, 2, 1);

  it('deletes blocks whose minute ended, in bounded batches', async () => {
    {
      const expired = Array.from({ length: 5 }, (_, i) => [
        sample(DAY1 + i * MIN),
        sample(DAY1 + i * MIN + 7),
      ]);
      for (const [i, b] of expired.entries()) await insertBlock('a', `m${i}`, b);
      const cutoff = DAY1 + DAY + 30_000;
      const nextDay = [sample(DAY1 + DAY + 1_000)];
      await insertBlock('a', 'cpu', [sample(DAY1 + DAY - 1)]);
      await insertBlock('a', 'straddling', nextDay);

      const purge = async (limits: { batchSize: number; maxRows: number }) => {
        const client = new pg.Client({ connectionString: db.url });
        await client.connect();
        try {
          await client.query('BEGIN');
          const r = await deleteDefaultPartitionRowsBefore(client, cutoff, limits);
          await client.query('COMMIT');
          return r;
        } finally {
          await client.end();
        }
      };

      // Bounded: 6 blocks expired, 4 at most a call.
      expect(await purge({ batchSize: 3, maxRows: 4 })).toEqual({ rows: 4, done: false });
      expect(await blocks('a')).toHaveLength(3);
      expect(await unmatched()).toEqual({ keys: 0, samples: 0 });

      // The other 2, within the same call's bound.
      expect(await purge({ batchSize: 3, maxRows: 4 })).toEqual({ rows: 2, done: true });
      expect(await viewed('a')).toEqual(nextDay);
      expect(await keys()).toEqual(nextDay.map(keyOf));
      expect(await unmatched()).toEqual({ keys: 0, samples: 0 });
      expect(await purge({ batchSize: 3, maxRows: 4 })).toEqual({ rows: 0, done: true });
    }
  });
});
