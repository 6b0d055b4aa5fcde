import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Clock } from '../../clock';
import type { Logger } from '../../log/logger';
import {
  deleteInBatches,
  runAndRecord,
  slotStart,
  type DeleteLimits,
  type DeleteResult,
  type FoldLimits,
  type FoldResult,
  type MaintenanceJob,
  type MaintenanceRunner,
  type MaintenanceSession,
  type OutcomeCompaction,
  type RunAttempt,
  type SkippedBucket,
} from '../maintenance';
import type { SqliteMaintenance } from './maintenance';

type Target = Parameters<SqliteMaintenance['deleteBatch']>[0];

/*
 * better-sqlite3 is synchronous: a statement holds this (tier 1) process's event loop, and every
 * request with it, until it returns. So every job works in slices, each one short transaction of
 * a bounded number of rows, and yields to the event loop between two: no slice holds it for more
 * than a few milliseconds on the reference box, whatever the number of apps or rows (measured in
 * docs/performance-history.md, "SQLite: jobs in slices").
 */

/** Most invalidation log entries (buckets) one fold transaction takes. */
export const FOLD_SLICE_ENTRIES = 500;
/** Most rows one purge DELETE removes, whatever `SLUICE_PURGE_BATCH_SIZE` says. */
export const DELETE_SLICE_ROWS = 1000;
/** Most apps of a minute one loss-map compaction transaction folds. */
export const COMPACT_SLICE_APPS = 100;

/** Batched deletes of one target, yielding to the event loop between batches. */
function deleteTarget(
  m: SqliteMaintenance,
  target: Target,
  cutoffMs: number,
  limits: DeleteLimits,
): Promise<DeleteResult> {
  const sliced = { ...limits, batchSize: Math.min(limits.batchSize, DELETE_SLICE_ROWS) };
  return deleteInBatches(sliced, (n) => m.deleteBatch(target, cutoffMs, n), yieldToEventLoop);
}

/** `limits.maxEntries` entries claimed in slices of `FOLD_SLICE_ENTRIES`, each its own transaction. */
async function foldInSlices(m: SqliteMaintenance, limits: FoldLimits): Promise<FoldResult> {
  let entries = 0;
  let buckets = 0;
  let rows1m = 0;
  let rows1h = 0;
  const skipped: SkippedBucket[] = [];
  for (;;) {
    await yieldToEventLoop();
    const n = Math.min(FOLD_SLICE_ENTRIES, limits.maxEntries - entries);
    const r = m.foldInvalidatedBuckets({ ...limits, maxEntries: n });
    entries += r.entries;
    buckets += r.buckets;
    rows1m += r.rows1m;
    rows1h += r.rows1h;
    skipped.push(...r.skipped);
    if (r.entries < n || entries >= limits.maxEntries) return { entries, buckets, rows1m, rows1h, skipped };
  }
}

/**
 * The oldest minute with rows to fold, in slices of `COMPACT_SLICE_APPS` apps, each its own
 * transaction: every key is folded whole in one, so readers' sums never change.
 */
async function compactMinuteInSlices(
  m: SqliteMaintenance,
  fromMs: number,
  beforeMs: number,
): Promise<OutcomeCompaction> {
  await yieldToEventLoop();
  const minute = m.oldestUnfoldedMinute(fromMs, beforeMs);
  if (minute === null) return { minute: null, folded: 0, written: 0 };
  let folded = 0;
  let written = 0;
  let after: string | null = null;
  for (;;) {
    const r = m.compactOutcomeSlice(minute, after, COMPACT_SLICE_APPS);
    folded += r.folded;
    written += r.written;
    if (r.lastApp === null || r.apps < COMPACT_SLICE_APPS) return { minute, folded, written };
    after = r.lastApp;
    await yieldToEventLoop();
  }
}

/** `m` with each call timed: `longest.ms` is the longest so far (milliseconds). */
function timed(m: SqliteMaintenance, longest: { ms: number }): SqliteMaintenance {
  const time =
    <A extends unknown[], R>(f: (...args: A) => R) =>
    (...args: A): R => {
      const started = performance.now();
      try {
        return f(...args);
      } finally {
        longest.ms = Math.max(longest.ms, performance.now() - started);
      }
    };
  return {
    claimRun: time(m.claimRun),
    finishRun: time(m.finishRun),
    foldInvalidatedBuckets: time(m.foldInvalidatedBuckets),
    deleteBatch: time(m.deleteBatch),
    oldestUnfoldedMinute: time(m.oldestUnfoldedMinute),
    compactOutcomeSlice: time(m.compactOutcomeSlice),
  };
}

/** The maintenance session on a SQLite storage: each call in short transactions, in slices. */
function sqliteSession(m: SqliteMaintenance): MaintenanceSession {
  return {
    kind: 'sqlite',
    foldInvalidatedBuckets: (limits) => foldInSlices(m, limits),
    // Error groups are computed at read time on SQLite.
    foldErrorGroups: async () => ({ entries: 0, minutes: 0, groups: 0, caughtUp: true }),
    async purgeRaw(cutoffMs, limits) {
      const samples = await deleteTarget(m, 'metric_samples', cutoffMs, limits);
      const events = await deleteTarget(m, 'events', cutoffMs, limits);
      return { rows: samples.rows + events.rows, partitionsDropped: 0, done: samples.done && events.done };
    },
    purgeRollups: (resolution, cutoffMs, limits) => deleteTarget(m, resolution, cutoffMs, limits),
    purgeRunHistory: (cutoffMs, limits) => deleteTarget(m, 'scheduler_runs', cutoffMs, limits),
    async purgeOutcomes(cutoffMs, limits) {
      const counts = await deleteTarget(m, 'event_outcomes', cutoffMs, limits);
      const reports = await deleteTarget(m, 'client_reports', cutoffMs, limits);
      return { rows: counts.rows + reports.rows, done: counts.done && reports.done };
    },
    compactOutcomeMinute: (fromMs, beforeMs) => compactMinuteInSlices(m, fromMs, beforeMs),
    ensurePartitions: async () => 0,
    mergeMetricBlocks: async () => ({
      groups: 0,
      rewritten: 0,
      blocks: 0,
      marked: 0,
      written: 0,
      duplicates: 0,
      caughtUp: true,
      seqNow: 0,
    }),
  };
}

export interface SqliteMaintenanceOptions {
  /** `SqliteStorage.maintenance` of the file the jobs run on. */
  readonly maintenance: SqliteMaintenance;
  readonly instance: string;
  /** The clock of the claim and the job; on one box the process clock is the database clock. */
  readonly clock: Clock;
  readonly logger: Logger;
  /**
   * Told after each run the longest step of it (milliseconds): one synchronous call, during which
   * the event loop waited (`sluice_scheduler_longest_slice_seconds`).
   */
  readonly onRun?: (job: string, longestSliceMs: number) => void;
}

/**
 * Tier 1: the same claim rule as PostgreSQL, on the SQLite file, without a lock (one process owns
 * the file). The claim commits before the job runs; a run that crashes the process leaves a
 * claim without a finish, and the next window runs again.
 */
class SqliteMaintenanceRunner implements MaintenanceRunner {
  private readonly never = new AbortController().signal;

  constructor(private readonly o: SqliteMaintenanceOptions) {}

  async attempt<Outcome extends { readonly rows: number }>(
    job: MaintenanceJob<Outcome>,
    intervalMs: number,
  ): Promise<RunAttempt<Outcome>> {
    const m = this.o.maintenance;
    const nowMs = this.o.clock.now();
    const slotMs = slotStart(nowMs, intervalMs);
    if (!m.claimRun({ job: job.name, slotMs, intervalMs, instance: this.o.instance, startedMs: nowMs })) {
      return { kind: 'claim_lost', nowMs };
    }
    const longest = { ms: 0 };
    const record = await runAndRecord(job, slotMs, {
      now: nowMs,
      session: sqliteSession(timed(m, longest)),
      signal: this.never,
      logger: this.o.logger,
    });
    m.finishRun(record.completion);
    this.o.onRun?.(job.name, longest.ms);
    return record.attempt;
  }

  async close(): Promise<void> {}
}

/** The maintenance port on a SQLite file (tier 1): in-process, each call its own short transaction. */
export function createSqliteMaintenanceRunner(options: SqliteMaintenanceOptions): MaintenanceRunner {
  return new SqliteMaintenanceRunner(options);
}
