import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { TelemetryEvent } from '../../src/events/types';
import { createLogger } from '../../src/log/logger';
import type { Job } from '../../src/scheduler/job';
import { downsampleJob } from '../../src/scheduler/jobs/downsample';
import { JOB_LOCK_KEYS } from '../../src/scheduler/lock-keys';
import type { MaintenanceRunner } from '../../src/storage/maintenance';
import {
  createPostgresMaintenanceRunner,
  type PostgresMaintenanceOptions,
  type PostgresStorage,
} from '../../src/storage/postgres';
import { createSqliteMaintenanceRunner, createSqliteStorage } from '../../src/storage/sqlite';
import { createTestDatabase, tempSqlitePath, type TestDatabase } from '../support/postgres';
import { openPostgresStorage, writeEvents } from '../support/storage';
import { telemetryEvent } from '../support/telemetry-events';

const DAY = 86_400_000;
const INTERVAL = 1000;
/** 2026-12-02T12:00:00.250Z */
const NOW = Date.UTC(2026, 11, 2, 12, 0, 0, 250);
const logger = createLogger('silent');

let db: TestDatabase;
let storage: PostgresStorage;
let admin: pg.Client;
const backends: MaintenanceRunner[] = [];

function backend(over: Partial<PostgresMaintenanceOptions> = {}): MaintenanceRunner {
  const b = createPostgresMaintenanceRunner({
    connectionString: db.url,
    connectTimeoutMs: 5000,
    jobTimeoutMs: 5000,
    lockTimeoutMs: 1000,
    instance: 'test',
    maxConnections: 1,
    logger,
    ...over,
  });
  backends.push(b);
  return b;
}

function sample(ts: number): TelemetryEvent {
  return telemetryEvent('metric', { name: 'm', ts, app: 'a' });
}

async function runsOf(job: string) {
  const { rows } = await admin.query(
    `SELECT slot_ms, instance, started_ms, rows, error, finished_ms FROM scheduler_runs WHERE job = $1 ORDER BY slot_ms`,
    [job],
  );
  return rows.map((r) => ({
    ...r,
    slot_ms: Number(r.slot_ms),
    started_ms: Number(r.started_ms),
    rows: r.rows === null ? null : Number(r.rows),
  }));
}

async function rollupCount(): Promise<number> {
  const { rows } = await admin.query('SELECT count(*) AS n FROM metric_rollups_1m');
  return Number(rows[0].n);
}

beforeAll(async () => {
  db = await createTestDatabase('sched_runner');
  storage = openPostgresStorage(db.url, { retentionRawMs: 2 * DAY, clock: { now: () => NOW } });
  await storage.migrate();
  await writeEvents(storage, [sample(NOW - 120_000), sample(NOW - 60_000)]);
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
});

beforeEach(async () => {
  await admin.query(
    'TRUNCATE scheduler_runs, metric_rollups_1m, metric_rollups_1h, metric_rollup_invalidations',
  );
  // Every test starts with both samples' buckets still to fold.
  await admin.query(
    'INSERT INTO metric_rollup_invalidations SELECT DISTINCT name, app, ts - ts % 60000 FROM metric_samples',
  );
});

afterAll(async () => {
  await Promise.all(backends.map((b) => b.close()));
  await storage?.close();
  await admin?.end();
  await db?.drop();
});

const downsample = downsampleJob({ retention1mMs: DAY });

describe('PostgreSQL runner: lock + claim', () => {
  it('claims each window once across instances, on the database clock it is given', async () => {
    let now = NOW;
    const clock = { now: () => now };
    const a = backend({ instance: 'a', databaseClock: clock });
    const b = backend({ instance: 'b', databaseClock: clock });

    // Two 1m buckets and their hour.
    expect((await a.attempt(downsample, INTERVAL)).kind).toBe('ran');
    expect(await b.attempt(downsample, INTERVAL)).toEqual({ kind: 'claim_lost', nowMs: NOW });
    now = NOW + 700; // same window [12:00:00, 12:00:01)
    expect((await b.attempt(downsample, INTERVAL)).kind).toBe('claim_lost');
    now = NOW + 750; // next window
    expect((await b.attempt(downsample, INTERVAL)).kind).toBe('ran');
    now = NOW + 400; // a clock that stepped back cannot re-run an earlier window
    expect((await a.attempt(downsample, INTERVAL)).kind).toBe('claim_lost');

    expect(await runsOf('downsample')).toEqual([
      {
        slot_ms: NOW - 250,
        instance: 'a',
        started_ms: NOW,
        rows: 3,
        error: null,
        finished_ms: expect.any(String),
      },
      {
        slot_ms: NOW + 750,
        instance: 'b',
        started_ms: NOW + 750,
        rows: 0,
        error: null,
        finished_ms: expect.any(String),
      },
    ]);
  });

  it('reports lock_busy without waiting while another session holds the job lock', async () => {
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock($1::bigint)', [JOB_LOCK_KEYS.downsample.toString()]);
      const started = Date.now();
      expect(await backend().attempt(downsample, INTERVAL)).toEqual({ kind: 'lock_busy' });
      expect(Date.now() - started).toBeLessThan(1000);
      // Other jobs have their own keys.
      expect(
        (await backend().attempt({ name: 'purge', run: async () => ({ rows: 0 }) }, INTERVAL)).kind,
      ).toBe('ran');
      await holder.query('ROLLBACK');
      expect((await backend().attempt(downsample, INTERVAL)).kind).toBe('ran');
    } finally {
      await holder.end();
    }
  });

  it('rolls back a failing job’s writes, records the failure, and leaves the window used', async () => {
    const failing: Job = {
      name: 'downsample',
      async run(ctx) {
        await downsample.run(ctx); // writes rollups and takes the invalidation log...
        throw new Error('boom after writing');
      },
    };
    const clock = { now: () => NOW };
    const r = await backend({ databaseClock: clock }).attempt(failing, INTERVAL);

    expect(r.kind).toBe('job_failed');
    expect(await rollupCount()).toBe(0);
    expect((await admin.query('SELECT * FROM metric_rollup_invalidations')).rowCount).toBe(2);
    expect(await runsOf('downsample')).toEqual([
      expect.objectContaining({ slot_ms: NOW - 250, rows: null, error: 'boom after writing' }),
    ]);
    expect((await backend({ databaseClock: clock }).attempt(downsample, INTERVAL)).kind).toBe('claim_lost');
  });

  it('bounds a run by lock_timeout: a job blocked on a table lock fails fast and is recorded', async () => {
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE metric_rollups_1m IN ACCESS EXCLUSIVE MODE');
      const started = Date.now();
      const r = await backend({ lockTimeoutMs: 200, databaseClock: { now: () => NOW } }).attempt(
        downsample,
        INTERVAL,
      );
      expect(r.kind === 'job_failed' && String(r.error)).toMatch(/lock timeout/);
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    expect(await runsOf('downsample')).toEqual([
      expect.objectContaining({ error: expect.stringMatching(/lock timeout/) }),
    ]);
  });

  it('with the real database clock, concurrent attempts run once per window and the window matches the server clock', async () => {
    const instances = ['x', 'y', 'z'].map((instance) => backend({ instance }));
    // An hour-long window: the three attempts cannot straddle two windows in practice.
    const results = await Promise.all(instances.map((b) => b.attempt(downsample, 3_600_000)));

    expect(results.filter((r) => r.kind === 'ran')).toHaveLength(1);
    expect(
      results
        .filter((r) => r.kind !== 'ran')
        .map((r) => r.kind)
        .sort(),
    ).toEqual(expect.arrayContaining([expect.stringMatching(/^(lock_busy|claim_lost)$/)]));
    const { rows } = await admin.query(
      `SELECT slot_ms, floor(extract(epoch FROM claimed_at) * 1000)::bigint AS claimed FROM scheduler_runs`,
    );
    expect(rows).toHaveLength(1);
    expect(Number(rows[0].claimed) - Number(rows[0].slot_ms)).toBeGreaterThanOrEqual(0);
    expect(Number(rows[0].claimed) - Number(rows[0].slot_ms)).toBeLessThan(3_600_000);
  });

  it('an attempt against an unreachable database rejects within the connect timeout', async () => {
    const dead = backend({ connectionString: 'postgres://postgres@127.0.0.1:1/none', connectTimeoutMs: 300 });
    const started = Date.now();
    await expect(dead.attempt(downsample, INTERVAL)).rejects.toThrow(/ECONNREFUSED/);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('SQLite runner: claim without a lock', () => {
  it('claims each window once and records runs', async () => {
    const file = tempSqlitePath('sched_runner');
    const sqlite = createSqliteStorage({ path: file, clock: { now: () => NOW }, logger });
    try {
      await sqlite.migrate();
      await writeEvents(sqlite, [sample(NOW - 60_000)]);
      let now = NOW;
      const b = createSqliteMaintenanceRunner({
        maintenance: sqlite.maintenance,
        instance: 's',
        clock: { now: () => now },
        logger,
      });
      expect((await b.attempt(downsample, INTERVAL)).kind).toBe('ran');
      expect((await b.attempt(downsample, INTERVAL)).kind).toBe('claim_lost');
      now += INTERVAL;
      const second = await b.attempt(downsample, INTERVAL);
      expect(second.kind === 'ran' && second.outcome.rows).toBe(0);
      const failing: Job = { name: 'purge', run: async () => Promise.reject(new Error('nope')) };
      expect((await b.attempt(failing, INTERVAL)).kind).toBe('job_failed');
      expect((await sqlite.queryMetrics({ names: ['m'], resolution: '1m', limit: 10 })).points).toEqual([
        { ts: NOW - 60_250, app: 'a', count: 1, min: 1, max: 1, sum: 1, avg: 1 },
      ]);
    } finally {
      await sqlite.close();
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    }
  });
});
