import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import pg from 'pg';
import { createLogger } from '../../src/log/logger';
import type { OutcomeCount, OutcomeName, OutcomeOrigin } from '../../src/loss-map/outcome';
import type { Job } from '../../src/scheduler/job';
import { compactOutcomesJob, compactionRange } from '../../src/scheduler/jobs/compact-outcomes';
import type { AttemptResult, RunBackend } from '../../src/scheduler/run-backend';
import { createPostgresMaintenanceRunner } from '../../src/storage/postgres';
import type { Storage } from '../../src/storage/port';
import { createSqliteMaintenanceRunner, createSqliteStorage } from '../../src/storage/sqlite';
import { waitFor } from '../support/http';
import { createTestDatabase, tempSqlitePath } from '../support/postgres';
import { openPostgresStorage, writeEvents } from '../support/storage';
import { telemetryEvent } from '../support/telemetry-events';

/**
 * The loss-map compaction job (src/scheduler/jobs/compact-outcomes.ts) on each storage, run by the
 * scheduler's own maintenance runners: sums per key never change, settled minutes end with one
 * row per key, recent minutes are left as written, runs are bounded, and (PostgreSQL) a row
 * committed while a compaction statement runs is neither lost nor counted twice.
 */
const MIN = 60_000;
const DAY = 24 * 60 * MIN;
/** 2026-12-20T15:30:20Z; with the default settle age, minutes before 15:29 are folded. */
const NOW = Date.UTC(2026, 11, 20, 15, 30, 20);
const SETTLE = { settleMs: 60_000, retentionRawMs: 7 * DAY };
const { beforeMs: SETTLED_BEFORE } = compactionRange(NOW, SETTLE);
const INTERVAL = 1000;
const logger = createLogger('silent');

interface StoredRow {
  app: string;
  minute: number;
  type: string;
  outcome: string;
  reason: string;
  origin: string;
  count: number;
  folded: boolean;
}

interface Harness {
  readonly kind: 'postgres' | 'sqlite';
  readonly storage: Storage;
  /** Runs `job` in a fresh interval window at database time `now`. */
  attempt(job: Job, now?: number): Promise<AttemptResult>;
  /** Every row of the loss map, sorted. */
  rows(): Promise<StoredRow[]>;
  /** Empties the loss map and the run history. */
  reset(): Promise<void>;
  dispose(): Promise<void>;
}

const SQL_ROWS = `SELECT app, minute, type, outcome, reason, origin, count, folded FROM event_outcomes
 ORDER BY app, minute, type, outcome, reason, origin, folded, count`;

/**
 * Attempts go to increasing windows, a second apart from NOW, so each one claims and runs; a reset
 * (with the run history) starts again from NOW.
 */
function windowClock(): { next(now?: number): number; current(): number; reset(): void } {
  let last = NOW - INTERVAL;
  return {
    next: (now) => {
      last = Math.max(last + INTERVAL, now ?? NOW);
      return last;
    },
    current: () => last,
    reset: () => void (last = NOW - INTERVAL),
  };
}

async function postgresHarness(): Promise<Harness & { readonly url: string }> {
  const db = await createTestDatabase('sched_compact');
  const storage = openPostgresStorage(db.url);
  await storage.migrate();
  const clock = windowClock();
  const backend: RunBackend = createPostgresMaintenanceRunner({
    connectionString: db.url,
    connectTimeoutMs: 5000,
    jobTimeoutMs: 20_000,
    // Long enough for the concurrency test to hold a row lock while it inserts.
    lockTimeoutMs: 15_000,
    instance: 'test',
    maxConnections: 1,
    databaseClock: { now: () => clock.current() },
    logger,
  });
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  return {
    kind: 'postgres',
    url: db.url,
    storage,
    attempt: (job, now) => {
      clock.next(now);
      return backend.attempt(job, INTERVAL);
    },
    rows: async () =>
      (await admin.query(SQL_ROWS)).rows.map((r) => ({
        ...r,
        minute: Number(r.minute),
        count: Number(r.count),
      })),
    reset: async () => {
      await admin.query('TRUNCATE event_outcomes, scheduler_runs');
      clock.reset();
    },
    dispose: async () => {
      await backend.close();
      await storage.close();
      await admin.end();
      await db.drop();
    },
  };
}

async function sqliteHarness(): Promise<Harness> {
  const file = tempSqlitePath('sched_compact');
  const storage = createSqliteStorage({ path: file, clock: { now: () => NOW }, logger });
  await storage.migrate();
  const clock = windowClock();
  const backend = createSqliteMaintenanceRunner({
    maintenance: storage.maintenance,
    instance: 'test',
    clock: { now: () => clock.current() },
    logger,
  });
  const admin = new Database(file);
  return {
    kind: 'sqlite',
    storage,
    attempt: (job, now) => {
      clock.next(now);
      return backend.attempt(job, INTERVAL);
    },
    rows: async () =>
      (admin.prepare(SQL_ROWS).all() as Array<Omit<StoredRow, 'folded'> & { folded: number }>).map((r) => ({
        ...r,
        folded: r.folded === 1,
      })),
    reset: async () => {
      admin.exec('DELETE FROM event_outcomes; DELETE FROM scheduler_runs;');
      clock.reset();
    },
    dispose: async () => {
      admin.close();
      await storage.close();
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    },
  };
}

type Keyed = Pick<StoredRow, 'app' | 'minute' | 'type' | 'outcome' | 'reason' | 'origin'>;

const keyOf = (r: Keyed): string => [r.app, r.minute, r.type, r.outcome, r.reason, r.origin].join('|');

/** Σ count per key: the model every read sums to. */
function sumsOf(rows: ReadonlyArray<Keyed & { count: number }>): Map<string, number> {
  const sums = new Map<string, number>();
  for (const r of rows) sums.set(keyOf(r), (sums.get(keyOf(r)) ?? 0) + r.count);
  return sums;
}

/** What `GET /v1/outcomes` reads, for every app of `apps`, over the whole test range. */
async function readSums(storage: Storage, apps: readonly string[]): Promise<Map<string, number>> {
  const rows: OutcomeCount[] = [];
  for (const app of apps) {
    for (const r of await storage.queryOutcomes({ app, from: NOW - DAY, to: NOW + DAY }))
      rows.push({ ...r, app });
  }
  return sumsOf(rows);
}

const APPS = ['a', 'b'];
const countArb: fc.Arbitrary<OutcomeCount> = fc.record({
  app: fc.constantFrom(...APPS),
  // From 12 minutes before NOW's minute to the current one: settled and recent minutes.
  minute: fc.integer({ min: -12, max: 0 }).map((k) => Math.floor(NOW / MIN) * MIN + k * MIN),
  type: fc.constantFrom('log', 'metric', 'error'),
  outcome: fc.constantFrom<OutcomeName>('stored', 'accepted', 'rejected'),
  reason: fc.constantFrom('', 'value_invalid'),
  origin: fc.constantFrom<OutcomeOrigin>('', 'direct', 'sdk'),
  count: fc.integer({ min: 0, max: 1000 }),
});
/** Write transactions, each with its own rows (the same key repeated within one, too). */
const batchesArb = fc.array(fc.array(countArb, { minLength: 1, maxLength: 8 }), {
  minLength: 1,
  maxLength: 12,
});

async function write(storage: Storage, batches: ReadonlyArray<readonly OutcomeCount[]>): Promise<void> {
  for (const counts of batches) await storage.writeOutcomes({ counts, reports: [], now: NOW });
}

/** Runs the job until a run finds nothing left, with each run's outcome. */
async function compactAll(h: Harness, job: Job, now?: number): Promise<Array<Record<string, unknown>>> {
  const runs: Array<Record<string, unknown>> = [];
  for (;;) {
    const r = await h.attempt(job, now);
    if (r.kind !== 'ran') throw new Error(JSON.stringify(r));
    runs.push({ rows: r.outcome.rows, ...r.outcome.detail });
    if (r.outcome.detail?.caughtUp === true) return runs;
    if (runs.length > 100) throw new Error('compaction never caught up');
  }
}

describe.each([
  ['postgres', postgresHarness],
  ['sqlite', sqliteHarness],
])('loss-map compaction on %s', (_kind, makeHarness) => {
  let h: Harness;
  beforeAll(async () => {
    h = await makeHarness();
  });
  afterAll(() => h?.dispose());
  beforeEach(() => h.reset());

  it('keeps every sum, leaves one folded row per key of each settled minute and recent minutes as written', async () => {
    const job = compactOutcomesJob({ ...SETTLE, maxRowsPerRun: 100_000 });
    await fc.assert(
      fc.asyncProperty(batchesArb, batchesArb, async (first, late) => {
        await h.reset();
        await write(h.storage, first);
        const recentBefore = (await h.rows()).filter((r) => r.minute >= SETTLED_BEFORE);
        await compactAll(h, job);

        const rows = await h.rows();
        expect(await readSums(h.storage, APPS)).toEqual(sumsOf(first.flat()));
        const settled = rows.filter((r) => r.minute < SETTLED_BEFORE);
        expect(settled.every((r) => r.folded)).toBe(true);
        expect(new Set(settled.map(keyOf)).size).toBe(settled.length);
        expect(rows.filter((r) => r.minute >= SETTLED_BEFORE)).toEqual(recentBefore);

        // Late rows into folded minutes: the next runs fold them into their key's row.
        await write(h.storage, late);
        await compactAll(h, job);
        const all = [...first.flat(), ...late.flat()];
        expect(await readSums(h.storage, APPS)).toEqual(sumsOf(all));
        const after = (await h.rows()).filter((r) => r.minute < SETTLED_BEFORE);
        expect(after.length).toBe(new Set(all.filter((c) => c.minute < SETTLED_BEFORE).map(keyOf)).size);
        expect(after.every((r) => r.folded)).toBe(true);
      }),
      { numRuns: 30 },
    );
  });

  it('folds a backlog in bounded runs, oldest minute first, then finds nothing to do', async () => {
    // 40 minutes of 5 write transactions each, 2 keys per transaction: 10 rows per minute.
    const minutes = Array.from({ length: 40 }, (_, i) => SETTLED_BEFORE - (40 - i) * MIN);
    for (const minute of minutes) {
      for (let t = 0; t < 5; t++) {
        const c = { app: 'a', minute, type: 'log', reason: '', origin: 'direct' as const, count: t + 1 };
        await h.storage.writeOutcomes({
          counts: [
            { ...c, outcome: 'accepted' },
            { ...c, outcome: 'stored', origin: '' },
          ],
          reports: [],
          now: NOW,
        });
      }
    }
    const expected = await readSums(h.storage, ['a']);
    const job = compactOutcomesJob({ ...SETTLE, maxRowsPerRun: 45 });
    const runs = await compactAll(h, job);
    // 45 rows a run: 5 minutes of 10 rows (the fifth reaches the bound), 8 runs, then one empty.
    expect(runs.slice(0, -1)).toEqual(
      Array.from({ length: 8 }, () => ({ rows: 50, minutes: 5, folded: 50, written: 10, caughtUp: false })),
    );
    expect(runs.at(-1)).toEqual({ rows: 0, minutes: 0, folded: 0, written: 0, caughtUp: true });
    expect(await readSums(h.storage, ['a'])).toEqual(expected);
    expect((await h.rows()).map((r) => r.minute)).toEqual(minutes.flatMap((m) => [m, m]));
    // A second pass touches nothing.
    const again = await h.attempt(job);
    expect(again.kind === 'ran' && again.outcome.rows).toBe(0);
  });

  it('folds a minute of 700 apps (SQLite: in slices of apps) into one row per key, every sum kept', async () => {
    const minute = SETTLED_BEFORE - 3 * MIN;
    const apps = Array.from({ length: 700 }, (_, i) => `app-${String(i).padStart(3, '0')}`);
    const c = { minute, type: 'log', outcome: 'accepted' as const, reason: '', origin: 'direct' as const };
    // Two write transactions: two rows of every key.
    for (let t = 1; t <= 2; t++) await write(h.storage, [apps.map((app) => ({ ...c, app, count: t }))]);
    const runs = await compactAll(h, compactOutcomesJob({ ...SETTLE, maxRowsPerRun: 100_000 }));
    expect(runs[0]).toEqual({ rows: 1400, minutes: 1, folded: 1400, written: 700, caughtUp: true });
    const rows = await h.rows();
    expect(rows.map((r) => [r.app, r.count, r.folded])).toEqual(apps.map((app) => [app, 3, true]));
  });

  it('leaves minutes before the purge cutoff to the purge and minutes within the settle age as written', async () => {
    const { fromMs, beforeMs } = compactionRange(NOW, SETTLE);
    expect(fromMs).toBe(Date.UTC(2026, 11, 13));
    expect(beforeMs).toBe(Date.UTC(2026, 11, 20, 15, 29));
    const c = { app: 'a', type: 'log', outcome: 'accepted' as const, reason: '', origin: 'direct' as const };
    const edges = [fromMs - MIN, fromMs, beforeMs - MIN, beforeMs, beforeMs + MIN];
    for (let i = 0; i < 2; i++) await write(h.storage, [edges.map((minute) => ({ ...c, minute, count: 1 }))]);
    await compactAll(h, compactOutcomesJob({ ...SETTLE, maxRowsPerRun: 10 }));
    const rows = await h.rows();
    expect(rows.map((r) => [r.minute, r.count, r.folded])).toEqual([
      [fromMs - MIN, 1, false],
      [fromMs - MIN, 1, false],
      [fromMs, 2, true],
      [beforeMs - MIN, 2, true],
      [beforeMs, 1, false],
      [beforeMs, 1, false],
      [beforeMs + MIN, 1, false],
      [beforeMs + MIN, 1, false],
    ]);
  });
});

describe('loss-map compaction on postgres, with a writer committing during the fold', () => {
  let h: Harness & { readonly url: string };
  beforeAll(async () => {
    h = await postgresHarness();
  });
  afterAll(() => h?.dispose());
  beforeEach(() => h.reset());

  it('a late event stored while the DELETE runs is left intact, then folded by the next run: counted once', async () => {
    const app = 'late';
    const minute = SETTLED_BEFORE - 5 * MIN;
    const event = (s: number) => telemetryEvent('log', { app, ts: minute + s * 1000 });
    // Three write transactions: three `stored` rows of one key, written by the trigger.
    for (let i = 0; i < 3; i++) await writeEvents(h.storage, [event(i), event(10 + i)]);
    const key = (r: StoredRow) => r.app === app && r.outcome === 'stored';
    expect((await h.rows()).filter(key).map((r) => r.count)).toEqual([2, 2, 2]);

    // Another session holds a row lock on one of them, so the compaction's DELETE, its snapshot
    // taken, waits there until the late write below has committed.
    const blocker = new pg.Client({ connectionString: h.url });
    const watcher = new pg.Client({ connectionString: h.url });
    await blocker.connect();
    await watcher.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query(
        `SELECT 1 FROM event_outcomes WHERE app = $1 AND minute = $2 AND outcome = 'stored' LIMIT 1 FOR UPDATE`,
        [app, minute],
      );
      // One minute per run: the next minute's step would see the late row (a new statement).
      const job = compactOutcomesJob({ ...SETTLE, maxRowsPerRun: 1 });
      let settled = false;
      const run = h.attempt(job).finally(() => (settled = true));
      await waitFor('the compaction waiting on the row lock', async () => {
        const { rows } = await watcher.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'sluice-scheduler:test'
              AND wait_event_type = 'Lock'`,
        );
        return rows[0].n === 1;
      });
      // A late event of the same minute, app and type, committed inside the compaction's window.
      await writeEvents(h.storage, [event(30)]);
      expect(settled).toBe(false);
      await blocker.query('COMMIT');
      const first = await run;
      expect(first.kind === 'ran' && first.outcome.detail).toEqual({
        minutes: 1,
        folded: 3,
        written: 1,
        caughtUp: false,
      });
    } finally {
      await blocker.end();
      await watcher.end();
    }
    // The fold holds exactly the rows it removed; the late row is there, as written.
    expect((await h.rows()).filter(key).map((r) => ({ count: r.count, folded: r.folded }))).toEqual([
      { count: 1, folded: false },
      { count: 6, folded: true },
    ]);
    const stored = async () =>
      (await h.storage.queryOutcomes({ app, from: minute, to: minute + MIN })).find(
        (r) => r.outcome === 'stored',
      )?.count;
    expect(await stored()).toBe(7);

    await compactAll(h, compactOutcomesJob({ ...SETTLE, maxRowsPerRun: 100 }));
    expect((await h.rows()).filter(key).map((r) => ({ count: r.count, folded: r.folded }))).toEqual([
      { count: 7, folded: true },
    ]);
    expect(await stored()).toBe(7);
  });

  it('rows written all along while runs fold the same minutes are each counted once', async () => {
    // Small runs: many fold statements, each racing the writer's transactions.
    const job = compactOutcomesJob({ ...SETTLE, maxRowsPerRun: 20 });
    const written: OutcomeCount[] = [];
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const counts = Array.from({ length: 4 }, (_, k) => ({
          app: 'race',
          minute: SETTLED_BEFORE - (1 + ((i + k) % 5)) * MIN,
          type: 'log',
          outcome: 'stored' as const,
          reason: '',
          origin: '' as const,
          count: 1 + ((i * 7 + k) % 13),
        }));
        await h.storage.writeOutcomes({ counts, reports: [], now: NOW });
        written.push(...counts);
      }
    })();
    let folded = 0;
    try {
      // Until the runs have folded rows many times over and the writer has kept pace with them.
      while (folded < 2000 || written.length < 2000) {
        const r = await h.attempt(job);
        if (r.kind !== 'ran') throw new Error(JSON.stringify(r));
        folded += r.outcome.rows;
      }
    } finally {
      writing = false;
      await writer;
    }
    await compactAll(h, compactOutcomesJob({ ...SETTLE, maxRowsPerRun: 1_000_000 }));
    expect(await readSums(h.storage, ['race'])).toEqual(sumsOf(written));
    expect((await h.rows()).map((r) => [r.minute, r.folded])).toEqual(
      [5, 4, 3, 2, 1].map((k) => [SETTLED_BEFORE - k * MIN, true]),
    );
  });
});
