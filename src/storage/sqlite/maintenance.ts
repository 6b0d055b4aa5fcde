import type Database from 'better-sqlite3';
import type { FoldLimits, FoldResult, RunClaim, RunCompletion } from '../maintenance';
import { compactOutcomeSlice, oldestUnfoldedMinute, type OutcomeSliceCompaction } from './compact-outcomes';
import { deleteBatch, type PurgeTarget } from './purge';
import { foldInvalidatedBuckets } from './rollups';
import * as runs from './scheduler-runs';
import { untimed, type TimeCall } from './call-timer';

/**
 * The scheduler's handle on a SQLite storage (tier 1: one process, no lock needed). better-sqlite3
 * is synchronous, so each call is one short `BEGIN IMMEDIATE` transaction on the storage's own
 * connection and blocks the event loop while it runs: callers keep every call bounded (a batch)
 * and yield between calls. Callers order their calls so any prefix leaves a consistent state.
 */
export interface SqliteMaintenance {
  claimRun(c: RunClaim): boolean;
  finishRun(c: RunCompletion): void;
  /** See rollups.ts `foldInvalidatedBuckets`: one transaction. */
  foldInvalidatedBuckets(limits: FoldLimits): FoldResult;
  /** See purge.ts `deleteBatch`. */
  deleteBatch(target: PurgeTarget, cutoffMs: number, limit: number): number;
  /** See compact-outcomes.ts: a read, no transaction. */
  oldestUnfoldedMinute(fromMs: number, beforeMs: number): number | null;
  /** See compact-outcomes.ts: one slice of a minute's apps, one transaction. */
  compactOutcomeSlice(minute: number, afterApp: string | null, maxApps: number): OutcomeSliceCompaction;
}

export function sqliteMaintenance(
  db: Database.Database,
  prepare: (sql: string) => Database.Statement,
  time: TimeCall = untimed,
): SqliteMaintenance {
  const inTransaction = <A extends unknown[], R>(fn: (...args: A) => R): ((...args: A) => R) => {
    const transaction = db.transaction(fn);
    return (...args) => time('job', () => transaction.immediate(...args));
  };
  return {
    claimRun: inTransaction((c: RunClaim) => runs.claimRun(prepare, c)),
    finishRun: inTransaction((c: RunCompletion) => runs.finishRun(prepare, c)),
    foldInvalidatedBuckets: inTransaction((limits: FoldLimits) =>
      foldInvalidatedBuckets(db, prepare, limits.maxEntries, limits.rawSourceBeforeMs),
    ),
    deleteBatch: inTransaction((target: PurgeTarget, cutoffMs: number, limit: number) =>
      deleteBatch(prepare, target, cutoffMs, limit),
    ),
    oldestUnfoldedMinute: (fromMs, beforeMs) =>
      time('job', () => oldestUnfoldedMinute(prepare, fromMs, beforeMs)),
    compactOutcomeSlice: inTransaction((minute: number, afterApp: string | null, maxApps: number) =>
      compactOutcomeSlice(prepare, minute, afterApp, maxApps),
    ),
  };
}
