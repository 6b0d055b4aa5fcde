import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { EventType, TelemetryEvent } from '../../src/events/types';
import { createLogger } from '../../src/log/logger';
import { purgeJob } from '../../src/scheduler/jobs/purge';
import { createPostgresMaintenanceRunner } from '../../src/storage/postgres';
import type { AttemptResult, RunBackend } from '../../src/scheduler/run-backend';
import { createSqliteMaintenanceRunner, createSqliteStorage } from '../../src/storage/sqlite';
import type { Storage } from '../../src/storage/port';
import { createTestDatabase, tempSqlitePath } from '../support/postgres';
import { telemetryEvent } from '../support/telemetry-events';
import { openPostgresStorage, writeEvents } from '../support/storage';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
/** 2026-12-20T15:30:20Z: the rollup cutoffs fall inside a minute and an hour, not on an edge. */
const NOW = Date.UTC(2026, 11, 20, 15, 30, 20);
const RETENTION = { retentionRawMs: 3 * DAY, retention1mMs: 2 * DAY, retention1hMs: 10 * DAY };
/** Kept raw rows start at the UTC midnight of the oldest day still overlapping the retention. */
const RAW_CUTOFF = Date.UTC(2026, 11, 17);
const LIMITS = { batchSize: 7, maxRows: 10 };
const logger = createLogger('silent');

interface Rollup {
  table: 'metric_rollups_1m' | 'metric_rollups_1h';
  bucket: number;
}

interface Harness {
  readonly storage: Storage;
  attempt(now: number): Promise<AttemptResult>;
  /** Runs SQL with positional `?`-free parameters ($1… on PostgreSQL, ? on SQLite). */
  insertRollup(r: Rollup): Promise<void>;
  insertRun(slotMs: number): Promise<void>;
  /** A loss-map row as the compaction writes it (`folded`): 5 events of app `a` rejected in `minute`. */
  insertFoldedOutcome(minute: number): Promise<void>;
  ids(table: 'events' | 'metric_samples'): Promise<string[]>;
  buckets(table: Rollup['table']): Promise<number[]>;
  runSlots(): Promise<number[]>;
  partitions(): Promise<string[]>;
  dispose(): Promise<void>;
}

const job = purgeJob({ ...RETENTION, limits: LIMITS });

async function postgresHarness(): Promise<Harness> {
  const db = await createTestDatabase('sched_purge');
  const open = (clockMs: number) =>
    openPostgresStorage(db.url, {
      partitionsAheadDays: 2,
      retentionRawMs: RETENTION.retentionRawMs,
      clock: { now: () => clockMs },
    });
  // Partitions for Dec 7–12 (an instance ten days ago) and Dec 20–22 (now); the days between
  // have none, so their rows sit in the default partition.
  const past = open(NOW - 10 * DAY);
  await past.migrate();
  await past.close();
  const storage = open(NOW);
  await storage.ensurePartitions();
  let now = NOW;
  const backend: RunBackend = createPostgresMaintenanceRunner({
    connectionString: db.url,
    connectTimeoutMs: 5000,
    jobTimeoutMs: 10_000,
    lockTimeoutMs: 1000,
    instance: 'test',
    maxConnections: 1,
    databaseClock: { now: () => now },
    logger,
  });
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  const numbers = async (sql: string) =>
    (await admin.query(sql)).rows.map((r) => Number(Object.values(r)[0]));
  return {
    storage,
    attempt: (at) => {
      now = at;
      return backend.attempt(job, 1000);
    },
    insertRollup: async ({ table, bucket }) =>
      void (await admin.query(`INSERT INTO ${table} VALUES ('m', $1, 'a', 1, 1, 1, 1)`, [bucket])),
    insertRun: async (slot) =>
      void (await admin.query(
        `INSERT INTO scheduler_runs (job, slot_ms, interval_ms, instance, started_ms) VALUES ('downsample', $1, 1000, 'old', $1)`,
        [slot],
      )),
    insertFoldedOutcome: async (minute) =>
      void (await admin.query(
        `INSERT INTO event_outcomes (app, minute, type, outcome, reason, origin, count, folded)
         VALUES ('a', $1, 'log', 'rejected', 'name_invalid', 'direct', 5, true)`,
        [minute],
      )),
    ids: async (table) => (await admin.query(`SELECT id FROM ${table} ORDER BY id`)).rows.map((r) => r.id),
    buckets: (table) => numbers(`SELECT bucket FROM ${table} ORDER BY bucket`),
    runSlots: () => numbers(`SELECT slot_ms FROM scheduler_runs WHERE instance = 'old' ORDER BY slot_ms`),
    partitions: async () =>
      (
        await admin.query(
          `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent IN ('events'::regclass, 'metric_blocks'::regclass)
            ORDER BY 1`,
        )
      ).rows.map((r) => r.name),
    dispose: async () => {
      await backend.close();
      await storage.close();
      await admin.end();
      await db.drop();
    },
  };
}

async function sqliteHarness(): Promise<Harness> {
  const file = tempSqlitePath('sched_purge');
  const storage = createSqliteStorage({ path: file, clock: { now: () => NOW }, logger });
  await storage.migrate();
  let now = NOW;
  const backend = createSqliteMaintenanceRunner({
    maintenance: storage.maintenance,
    instance: 'test',
    clock: { now: () => now },
    logger,
  });
  const admin = new Database(file);
  const numbers = (sql: string) => (admin.prepare(sql).raw().all() as number[][]).map((r) => Number(r[0]));
  return {
    storage,
    attempt: (at) => {
      now = at;
      return backend.attempt(job, 1000);
    },
    insertRollup: async ({ table, bucket }) =>
      void admin.prepare(`INSERT INTO ${table} VALUES ('m', ?, 'a', 1, 1, 1, 1)`).run(bucket),
    insertRun: async (slot) =>
      void admin
        .prepare(
          `INSERT INTO scheduler_runs (job, slot_ms, interval_ms, instance, started_ms) VALUES ('downsample', ?, 1000, 'old', ?)`,
        )
        .run(slot, slot),
    insertFoldedOutcome: async (minute) =>
      void admin
        .prepare(
          `INSERT INTO event_outcomes (app, minute, type, outcome, reason, origin, count, folded)
           VALUES ('a', ?, 'log', 'rejected', 'name_invalid', 'direct', 5, 1)`,
        )
        .run(minute),
    ids: async (table) =>
      (admin.prepare(`SELECT id FROM ${table} ORDER BY id`).all() as { id: string }[]).map((r) => r.id),
    buckets: async (table) => numbers(`SELECT bucket FROM ${table} ORDER BY bucket`),
    runSlots: async () =>
      numbers(`SELECT slot_ms FROM scheduler_runs WHERE instance = 'old' ORDER BY slot_ms`),
    partitions: async () => [],
    dispose: async () => {
      admin.close();
      await storage.close();
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    },
  };
}

function event(type: EventType, ts: number): TelemetryEvent {
  return telemetryEvent(type, { ts, app: 'a' });
}

describe.each([
  ['postgres', postgresHarness],
  ['sqlite', sqliteHarness],
])('purge on %s', (kind, makeHarness) => {
  let h: Harness;
  beforeAll(async () => {
    h = await makeHarness();
  });
  afterAll(() => h?.dispose());

  it('leaves exactly the data inside each retention, in bounded runs', async () => {
    // Raw: every day from Dec 5 to Dec 21, at midnight, noon and the last millisecond.
    const raw: TelemetryEvent[] = [];
    for (let day = Date.UTC(2026, 11, 5); day <= Date.UTC(2026, 11, 21); day += DAY) {
      for (const ts of [day, day + 12 * HOUR, day + DAY - 1]) {
        raw.push(event('metric', ts), event(raw.length % 3 === 0 ? 'error' : 'log', ts));
      }
    }
    await writeEvents(h.storage, raw);
    // Rollups: a run of buckets on each side of the cutoff; a bucket goes once it ends by the cutoff.
    const cut1m = NOW - RETENTION.retention1mMs; // Dec 18 15:30:20
    const cut1h = NOW - RETENTION.retention1hMs; // Dec 10 15:30:20
    const first1m = Math.floor(cut1m / MIN) * MIN - 25 * MIN; // 15:05 … 15:34
    const first1h = Math.floor(cut1h / HOUR) * HOUR - 20 * HOUR;
    for (let i = 0; i < 30; i++)
      await h.insertRollup({ table: 'metric_rollups_1m', bucket: first1m + i * MIN });
    for (let i = 0; i < 24; i++)
      await h.insertRollup({ table: 'metric_rollups_1h', bucket: first1h + i * HOUR });
    const oldRuns = [NOW - 4 * DAY, NOW - 3 * DAY - 1, NOW - 3 * DAY + MIN, NOW - DAY];
    for (const slot of oldRuns) await h.insertRun(slot);
    // Folded loss-map rows on both sides of the raw cutoff, beside the unfolded ones the writes added.
    const foldedMinutes = Array.from({ length: 12 }, (_, i) => RAW_CUTOFF + (i - 8) * HOUR);
    for (const minute of foldedMinutes) await h.insertFoldedOutcome(minute);

    const results: Array<Record<string, number | boolean>> = [];
    for (let i = 0; ; i++) {
      const r = await h.attempt(NOW + i * 1000);
      if (r.kind !== 'ran') throw new Error(JSON.stringify(r));
      // Each target at most maxRows: raw (2 tables), rollups (2), runs, the loss map (2 tables).
      expect(r.outcome.rows).toBeLessThanOrEqual(LIMITS.maxRows * 7);
      results.push({ rows: r.outcome.rows, ...r.outcome.detail });
      if (r.outcome.detail?.done === true) break;
      if (i > 10) throw new Error('purge never finished');
    }

    expect(results.length).toBeGreaterThan(1); // bounded: the backlog took several runs
    const kept = (type: 'metric' | 'other') =>
      raw
        .filter((e) => (type === 'metric') === (e.type === 'metric') && e.ts >= RAW_CUTOFF)
        .map((e) => e.id)
        .sort();
    expect(await h.ids('metric_samples')).toEqual(kept('metric'));
    expect(await h.ids('events')).toEqual(kept('other'));
    expect(await h.buckets('metric_rollups_1m')).toEqual(
      Array.from({ length: 30 }, (_, i) => first1m + i * MIN).filter((b) => b + MIN > cut1m),
    );
    expect((await h.buckets('metric_rollups_1m'))[0]).toBe(Date.UTC(2026, 11, 18, 15, 30));
    expect(await h.buckets('metric_rollups_1h')).toEqual(
      Array.from({ length: 24 }, (_, i) => first1h + i * HOUR).filter((b) => b + HOUR > cut1h),
    );
    expect((await h.buckets('metric_rollups_1h'))[0]).toBe(Date.UTC(2026, 11, 10, 15));
    expect(await h.runSlots()).toEqual([NOW - 3 * DAY + MIN, NOW - DAY]);
    // The loss map went with the raw data: what it counts as stored is exactly what is left.
    const outcomes = await h.storage.queryOutcomes({ app: 'a', from: 0, to: NOW + 2 * DAY });
    expect(outcomes.every((o) => o.minute >= RAW_CUTOFF)).toBe(true);
    const stored = outcomes.filter((o) => o.outcome === 'stored').reduce((n, o) => n + o.count, 0);
    expect(stored).toBe(kept('metric').length + kept('other').length);
    const rejected = outcomes.filter((o) => o.outcome === 'rejected').reduce((n, o) => n + o.count, 0);
    expect(rejected).toBe(5 * foldedMinutes.filter((m) => m >= RAW_CUTOFF).length);

    if (kind === 'postgres') {
      // Expired days went as whole partitions; only the default partition was deleted row by row.
      expect(results.reduce((n, r) => n + Number(r.partitionsDropped), 0)).toBe(12);
      expect(await h.partitions()).toEqual(
        [
          'events_default',
          'events_p20261220',
          'events_p20261221',
          'events_p20261222',
          'metric_blocks_default',
          'metric_blocks_p20261220',
          'metric_blocks_p20261221',
          'metric_blocks_p20261222',
        ].sort(),
      );
    }

    // Nothing left to do: the next run touches nothing.
    const again = await h.attempt(NOW + 30_000);
    expect(again.kind === 'ran' && again.outcome.rows).toBe(0);
  });
});
