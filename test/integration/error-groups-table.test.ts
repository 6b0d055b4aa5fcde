import pg from 'pg';
import { createLogger } from '../../src/log/logger';
import { groupErrors } from '../../src/read/error-groups';
import type { Job } from '../../src/scheduler/job';
import { downsampleJob } from '../../src/scheduler/jobs/downsample';
import { purgeJob } from '../../src/scheduler/jobs/purge';
import { scanErrorsWith } from '../../src/storage/layout/error-scan-sql';
import { createPostgresMaintenanceRunner, type PostgresStorage } from '../../src/storage/postgres';
import { PG_ERROR_SCAN_DIALECT } from '../../src/storage/postgres/query-errors';
import type { ErrorScanQuery } from '../../src/storage/port';
import type { MaintenanceRunner } from '../../src/storage/maintenance';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { openPostgresStorage, writeEvents } from '../support/storage';
import { telemetryEvent } from '../support/telemetry-events';

/*
 * Error groups on PostgreSQL: the downsample job keeps `error_groups_1m` per (app, minute,
 * fingerprint), and `scanErrors` reads it for the minutes the job has folded, raw errors for the
 * rest. Whatever the job has or has not folded, the groups equal those computed from raw events.
 */

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
/** 10:30:20 UTC: the current minute and the one before are open. */
const NOW = Date.UTC(2026, 11, 6, 10, 30, 20);
const logger = createLogger('silent');

let db: TestDatabase;
let admin: pg.Client;
let storage: PostgresStorage;
const runners: MaintenanceRunner[] = [];
let dbNow = NOW;

function runner(): MaintenanceRunner {
  const r = createPostgresMaintenanceRunner({
    connectionString: db.url,
    connectTimeoutMs: 5000,
    jobTimeoutMs: 30_000,
    lockTimeoutMs: 1000,
    instance: `test-${runners.length}`,
    maxConnections: 1,
    databaseClock: { now: () => dbNow },
    logger,
  });
  runners.push(r);
  return r;
}

const downsample: Job = downsampleJob({ retention1mMs: 2 * DAY });
const INTERVAL = 1000;
/** The next interval window of the database clock, so each attempt is a window of its own. */
function nextWindow(): void {
  dbNow += INTERVAL;
}
/** One run of `job` in a window of its own. */
async function run(job: Job): Promise<void> {
  nextWindow();
  const r = await runners[0]!.attempt(job, INTERVAL);
  expect(r.kind).toBe('ran');
}

beforeAll(async () => {
  db = await createTestDatabase('error_groups_table');
  storage = openPostgresStorage(db.url, { retentionRawMs: 3 * DAY, clock: { now: () => NOW } });
  await storage.migrate();
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  runner();
});

afterAll(async () => {
  for (const r of runners) await r.close();
  await admin?.end();
  await storage?.close();
  await db?.drop();
});

let seq = 0;
/** `n` errors of `app` at `ts` + i ms, messages varying by a number (one template per kind). */
function errors(app: string, ts: number, n: number, kind = 'TypeError', env: string | null = null) {
  return Array.from({ length: n }, (_, i) =>
    telemetryEvent(
      'error',
      {
        app,
        env,
        ts: ts + i,
        error: { message: `order ${++seq} not found`, kind, stack: null },
      },
      NOW,
    ),
  );
}

/** The groups computed from raw events alone (every error of the window read). */
async function rawGroups(q: Omit<ErrorScanQuery, 'scanLimit'>) {
  const scan = await scanErrorsWith(
    {
      async rows<Row>(build: (param: (v: unknown) => string) => string): Promise<Row[]> {
        const values: unknown[] = [];
        const text = build((v) => `$${values.push(v)}`);
        return (await admin.query(text, values)).rows as Row[];
      },
    },
    { ...q, scanLimit: 1_000_000 },
    PG_ERROR_SCAN_DIALECT,
  );
  return groupErrors(scan.rows);
}

async function tableRows(app?: string): Promise<number> {
  const r = await admin.query<{ n: string }>(
    `SELECT count(*) AS n FROM error_groups_1m ${app === undefined ? '' : 'WHERE app = $1'}`,
    app === undefined ? [] : [app],
  );
  return Number(r.rows[0]?.n);
}

/** `scanErrors` (scan bound `scanLimit`) against raw, for the window and filters of `q`. */
async function expectSameAsRaw(q: Omit<ErrorScanQuery, 'scanLimit'>, scanLimit = 50) {
  const scan = await storage.scanErrors({ ...q, scanLimit });
  expect(scan.boundTs).toBeNull();
  expect(groupErrors(scan.rows)).toEqual(await rawGroups(q));
}

describe('error groups kept by the downsample job (PostgreSQL)', () => {
  it('reads the folded minutes from the table and equals the groups of raw events', async () => {
    await writeEvents(storage, [
      ...errors('shop', NOW - 2 * HOUR + 1500, 40),
      ...errors('shop', NOW - 90 * MIN + 7, 30, 'RangeError'),
      ...errors('blog', NOW - 45 * MIN + 59_990, 20),
      // Open minutes: read raw.
      ...errors('shop', NOW - 30_000, 5),
      ...errors('blog', NOW - 1000, 3, 'RangeError'),
    ]);
    await run(downsample);
    expect(await tableRows()).toBeGreaterThan(0);
    const hours = await admin.query<{ n: string }>('SELECT count(*) AS n FROM error_groups_1h');
    expect(Number(hours.rows[0]?.n)).toBeGreaterThan(0);
    // 98 errors against a scan limit of 50: only the table makes the answer complete.
    await expectSameAsRaw({ from: NOW - DAY, to: NOW + MIN });
    await expectSameAsRaw({ app: 'shop', from: NOW - DAY, to: NOW + MIN });
    // Windows not on minute edges: their partial minutes are read raw.
    await expectSameAsRaw({ from: NOW - 2 * HOUR + 1510, to: NOW - 45 * MIN + 59_995 });
    await expectSameAsRaw({ app: 'blog', from: NOW - 50 * MIN, to: NOW - 45 * MIN + 59_995 });
  });

  it('reads at most the scan limit of folded rows, the most recently seen, and says where it stopped', async () => {
    // Three (app, fingerprint)s in folded minutes: shop's two kinds, blog's one.
    const q = { from: NOW - DAY, to: NOW - 5 * MIN };
    const scan = await storage.scanErrors({ ...q, scanLimit: 2 });
    expect(scan.rows).toHaveLength(2);
    const oldestKept = Math.min(...scan.rows.map((r) => r.lastTs));
    expect(scan.boundTs).toBe(oldestKept);
    // What was kept is whole: each row's count is all of its (app, kind)'s errors in the window.
    const all = await rawGroups(q);
    for (const r of scan.rows) {
      const g = all.find((x) => x.kind === r.kind);
      expect(g?.apps).toContain(r.app);
    }
    expect(scan.rows.map((r) => r.app).sort()).toEqual(['blog', 'shop']);
  });

  it('reads raw what the table cannot filter (env), bounded as before', async () => {
    await writeEvents(storage, errors('shop', NOW - 3 * MIN, 10, 'EnvError', 'prod'));
    const q = { env: 'prod', from: NOW - DAY, to: NOW + MIN };
    const scan = await storage.scanErrors({ ...q, scanLimit: 50 });
    expect(scan.boundTs).not.toBeNull();
    expect(groupErrors(scan.rows)).toEqual(await rawGroups(q));
  });

  it('folds late errors of folded minutes at the next run', async () => {
    await run(downsample);
    const late = errors('shop', NOW - 2 * HOUR + 1600, 7);
    await writeEvents(storage, [...late, ...errors('late-app', NOW - 5 * HOUR, 4, 'LateError')]);
    // A resend among new errors: written through the deduplicating insert, which logs them too.
    await writeEvents(storage, [...late, ...errors('shop', NOW - 100 * MIN, 2, 'ResentError')]);
    await run(downsample);
    await expectSameAsRaw({ from: NOW - DAY, to: NOW + MIN });
    expect(await tableRows('late-app')).toBe(1);
  });

  it('runs once when two collectors run the job in the same interval', async () => {
    await writeEvents(storage, errors('twice', NOW - 20 * MIN, 12));
    const second = runner();
    nextWindow();
    const attempts = await Promise.all([
      runners[0]!.attempt(downsample, INTERVAL),
      second.attempt(downsample, INTERVAL),
    ]);
    expect(attempts.filter((a) => a.kind === 'ran')).toHaveLength(1);
    const counts = await admin.query<{ n: string }>(
      `SELECT sum(count) AS n FROM error_groups_1m WHERE app = 'twice'`,
    );
    expect(Number(counts.rows[0]?.n)).toBe(12);
    await expectSameAsRaw({ from: NOW - DAY, to: NOW + MIN });
  });

  it('deletes an app’s groups with its data', async () => {
    await storage.deleteAppData({ app: 'blog', scope: 'all' });
    expect(await tableRows('blog')).toBe(0);
    await storage.deleteAppData({ app: 'shop', scope: 'before', before: NOW - 90 * MIN + 20 });
    await run(downsample);
    await expectSameAsRaw({ from: NOW - DAY, to: NOW + MIN });
    const shop = await admin.query<{ m: string }>(
      `SELECT min(minute) AS m FROM error_groups_1m WHERE app = 'shop'`,
    );
    expect(Number(shop.rows[0]?.m)).toBe(NOW - 90 * MIN - ((NOW - 90 * MIN) % MIN));
  });

  it('purges groups with the raw errors they count', async () => {
    await writeEvents(storage, errors('old', NOW - 2 * DAY - 11 * HOUR, 3));
    await run(downsample);
    expect(await tableRows('old')).toBe(1);
    const purge = purgeJob({
      retentionRawMs: 2 * DAY,
      retention1mMs: 2 * DAY,
      retention1hMs: 30 * DAY,
      limits: { batchSize: 1000, maxRows: 100_000 },
    });
    await run(purge);
    expect(await tableRows('old')).toBe(0);
    await expectSameAsRaw({ from: NOW - 3 * DAY, to: NOW + MIN });
  });
});
