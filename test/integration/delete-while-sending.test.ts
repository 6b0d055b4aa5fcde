import Database from 'better-sqlite3';
import pg from 'pg';
import { metric } from '../support/events';
import { getJson, postEvents, waitFor } from '../support/http';
import { startInProcess, type InProcessCollector } from '../support/in-process';
import { createTestDatabase, tempSqlitePath, type TestDatabase } from '../support/postgres';
import { runCli } from '../support/run-cli';
import { openPostgresStorage, writeEvents } from '../support/storage';
import { telemetryEvent } from '../support/telemetry-events';

/**
 * `sluice delete --app X --yes`, five times, while X keeps sending samples into past minutes (the
 * report's reproduction), with the defaults a user gets. Afterwards, once the collector has
 * stopped (its lanes and loss-map counts written) and the next downsample has run: every 1m and
 * 1h rollup of X equals a fold of X's raw samples left, no invalidation is pending, and X's loss
 * map describes exactly what is stored (nothing pending, `stored` = the rows).
 */

const MIN = 60_000;
const HOUR = 3_600_000;
const APP = 'deleted-while-sending';
const NAME = 'queue.depth';

/** Count, sum, min, max per bucket, as both the raw fold and the rollups give them. */
type Buckets = Record<string, [number, number, number, number]>;

interface StorageProbe {
  /** X's raw samples folded by `width`, and X's rollup rows of that width. */
  fold(width: number): Promise<Buckets>;
  rollups(resolution: '1m' | '1h'): Promise<Buckets>;
  pendingInvalidations(): Promise<number>;
  rows(): Promise<number>;
  close(): Promise<void>;
}

function buckets(rows: ReadonlyArray<Record<string, unknown>>): Buckets {
  const out: Buckets = {};
  for (const r of rows)
    out[String(r.bucket)] = [Number(r.count), Number(r.sum), Number(r.min), Number(r.max)];
  return out;
}

const foldSql = (width: number, p: string): string =>
  `SELECT ts - ts % ${width} AS bucket, count(*) AS count, sum(value) AS sum, min(value) AS min, max(value) AS max
     FROM metric_samples WHERE app = ${p} AND name = '${NAME}' GROUP BY 1`;
const rollupSql = (resolution: string, p: string): string =>
  `SELECT bucket, count, sum, min, max FROM metric_rollups_${resolution} WHERE app = ${p} AND name = '${NAME}'`;

async function postgresProbe(url: string): Promise<StorageProbe> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const q = async (sql: string) => (await client.query(sql, [APP])).rows;
  return {
    fold: async (width) => buckets(await q(foldSql(width, '$1'))),
    rollups: async (r) => buckets(await q(rollupSql(r, '$1'))),
    pendingInvalidations: async () =>
      Number((await q(`SELECT count(*) AS n FROM metric_rollup_invalidations WHERE app = $1`))[0]?.n),
    rows: async () => Number((await q(`SELECT count(*) AS n FROM metric_samples WHERE app = $1`))[0]?.n),
    close: () => client.end(),
  };
}

async function sqliteProbe(file: string): Promise<StorageProbe> {
  const db = new Database(file, { readonly: true });
  const q = (sql: string) => db.prepare(sql).all(APP) as Array<Record<string, unknown>>;
  return {
    fold: async (width) => buckets(q(foldSql(width, '?'))),
    rollups: async (r) => buckets(q(rollupSql(r, '?'))),
    pendingInvalidations: async () =>
      Number(q(`SELECT count(*) AS n FROM metric_rollup_invalidations WHERE app = ?`)[0]?.n),
    rows: async () => Number(q(`SELECT count(*) AS n FROM metric_samples WHERE app = ?`)[0]?.n),
    close: async () => void db.close(),
  };
}

async function downsampleRuns(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith('sluice_scheduler_runs_total{job_name="downsample",result="success"}'));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

describe.each(['postgres', 'sqlite'] as const)('deleting an app while it sends (%s)', (kind) => {
  let db: TestDatabase | null = null;
  let env: Record<string, string>;

  beforeAll(async () => {
    db = kind === 'postgres' ? await createTestDatabase('delete_sending') : null;
    env = db ? { SLUICE_DATABASE_URL: db.url } : { SLUICE_SQLITE_PATH: tempSqlitePath('delete_sending') };
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('leaves rollups equal to a fold of the raw rows, and a loss map of exactly what is stored', async () => {
    // The downsample job off while the app sends: the deletes race the writer, not the fold. No rate
    // limit, so that the writer commits a batch every few milliseconds, each delete among them.
    const sending = await startInProcess(
      { ...env, SLUICE_SCHEDULER: 'off', SLUICE_RATE_LIMIT: '0' },
      { defaults: 'user' },
    );
    let collector: InProcessCollector | null = sending;
    try {
      let stop = false;
      let sent = 0;
      const sender = (async () => {
        // 20 samples every 5 ms, each in one of the last 20 minutes, integer values so that sums
        // compare exactly. Bounded: at most 2,000 requests.
        for (let round = 0; !stop && round < 2000; round++) {
          const now = Date.now();
          const batch = Array.from({ length: 20 }, (_, i) =>
            metric(APP, {
              name: NAME,
              ts: now - ((round * 7 + i * 3) % 20) * MIN - i,
              value: (round + i) % 50,
            }),
          );
          const res = await postEvents(sending.url, batch);
          if (res.status === 202) sent += batch.length;
          await new Promise((r) => setTimeout(r, 5));
        }
      })();
      for (let i = 0; i < 5; i++) {
        await waitFor('samples between two deletes', () => sent >= (i + 1) * 400, 20_000);
        const run = await runCli(['delete', '--app', APP, '--yes'], { ...env, SLUICE_LOG_LEVEL: 'warn' });
        expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
      }
      stop = true;
      await sender;
      // Its lanes and its loss-map counts are written at stop.
      expect(await sending.stop()).toBe(0);
      collector = null;

      collector = await startInProcess({ ...env, SLUICE_JOB_DOWNSAMPLE_INTERVAL_MS: '1000' });
      const probe =
        kind === 'postgres'
          ? await postgresProbe(env.SLUICE_DATABASE_URL as string)
          : await sqliteProbe(env.SLUICE_SQLITE_PATH as string);
      try {
        const runsBefore = await downsampleRuns(collector.url);
        const c = collector;
        await waitFor(
          'a downsample run after the restart',
          async () => (await downsampleRuns(c.url)) >= runsBefore + 2,
          20_000,
        );
        expect(await probe.pendingInvalidations()).toBe(0);
        expect(await probe.rollups('1m')).toEqual(await probe.fold(MIN));
        expect(await probe.rollups('1h')).toEqual(await probe.fold(HOUR));

        const rows = await probe.rows();
        const to = Date.now() + MIN;
        const map = (await getJson(`${c.url}/v1/outcomes?app=${APP}&from=${to - 2 * HOUR}&to=${to}`)).body;
        expect({ stored: map.stored, pending: map.pending, lost: map.lost }).toEqual({
          stored: rows,
          pending: { sdk: 0, pipeline: 0 },
          lost: 0,
        });
        expect(map.generated).toBe(rows);
      } finally {
        await probe.close();
      }
    } finally {
      await collector?.stop();
    }
  });
});

describe('a write that commits while a deletion is between two statements (postgres)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('delete_between');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('keeps its samples and their invalidation log rows together: the next fold sees them', async () => {
    const deleter = openPostgresStorage(db.url);
    const writer = openPostgresStorage(db.url);
    const blocker = new pg.Client({ connectionString: db.url });
    await blocker.connect();
    try {
      await deleter.migrate();
      const now = Date.now();
      await writeEvents(writer, [
        telemetryEvent('metric', { app: APP, name: NAME, ts: now - 10 * MIN, value: 1 }),
      ]);
      // The deletion stops at its rollup statement, after the one that deletes the samples.
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE metric_rollups_1m IN ACCESS EXCLUSIVE MODE');
      const deleting = deleter.deleteAppData({ app: APP, scope: 'all' });
      await waitFor('the deletion waiting at its rollup statement', async () => {
        const { rows } = await blocker.query(
          `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
            WHERE NOT l.granted AND c.relname = 'metric_rollups_1m'`,
        );
        return rows[0].n === 1;
      });
      // Meanwhile the writer commits a sample of the app, with its invalidation log row.
      const late = telemetryEvent('metric', { app: APP, name: NAME, ts: now - 5 * MIN, value: 7 });
      await writeEvents(writer, [late]);
      await blocker.query('COMMIT');
      await deleting;

      const { rows: samples } = await blocker.query(`SELECT id::text FROM metric_samples WHERE app = $1`, [
        APP,
      ]);
      const { rows: log } = await blocker.query(
        `SELECT bucket::text FROM metric_rollup_invalidations WHERE app = $1`,
        [APP],
      );
      const { rows: stored } = await blocker.query(
        `SELECT sum(count)::int AS n FROM event_outcomes WHERE app = $1 AND outcome = 'stored'`,
        [APP],
      );
      // Either the sample went with the deletion, or it stays with its log row and its stored count.
      expect(samples.map((r) => r.id)).toEqual([late.id]);
      expect(log.map((r) => Number(r.bucket))).toEqual([late.ts - (late.ts % MIN)]);
      expect(stored[0].n).toBe(1);
    } finally {
      await blocker.end();
      await deleter.close();
      await writer.close();
    }
  });
});
