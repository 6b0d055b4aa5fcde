import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Clock } from '../../clock';
import type { Logger } from '../../log/logger';
import {
  deleteInBatches,
  runAndRecord,
  slotStart,
  type DeleteLimits,
  type DeleteResult,
  type MaintenanceJob,
  type MaintenanceRunner,
  type MaintenanceSession,
  type RunAttempt,
} from '../maintenance';
import type { SqliteMaintenance } from './maintenance';

type Target = Parameters<SqliteMaintenance['deleteBatch']>[0];

/**
 * Batched deletes of one target, yielding to the event loop between batches: better-sqlite3 is
 * synchronous, so one long DELETE would stall every request of this (tier 1) process.
 */
function deleteTarget(
  m: SqliteMaintenance,
  target: Target,
  cutoffMs: number,
  limits: DeleteLimits,
): Promise<DeleteResult> {
  return deleteInBatches(limits, (n) => m.deleteBatch(target, cutoffMs, n), yieldToEventLoop);
}

/** The maintenance session on a SQLite storage: each call its own short transaction. */
function sqliteSession(m: SqliteMaintenance): MaintenanceSession {
  return {
    kind: 'sqlite',
    async foldInvalidatedBuckets(limits) {
      // Let requests in between two (synchronous) folds.
      await yieldToEventLoop();
      return m.foldInvalidatedBuckets(limits);
    },
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
    async compactOutcomeMinute(fromMs, beforeMs) {
      // Let requests in between two (synchronous) minutes.
      await yieldToEventLoop();
      return m.compactOutcomeMinute(fromMs, beforeMs);
    },
    ensurePartitions: async () => 0,
  };
}

export interface SqliteMaintenanceOptions {
  /** `SqliteStorage.maintenance` of the file the jobs run on. */
  readonly maintenance: SqliteMaintenance;
  readonly instance: string;
  /** The clock of the claim and the job; on one box the process clock is the database clock. */
  readonly clock: Clock;
  readonly logger: Logger;
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
    const record = await runAndRecord(job, slotMs, {
      now: nowMs,
      session: sqliteSession(m),
      signal: this.never,
      logger: this.o.logger,
    });
    m.finishRun(record.completion);
    return record.attempt;
  }

  async close(): Promise<void> {}
}

/** The maintenance port on a SQLite file (tier 1): in-process, each call its own short transaction. */
export function createSqliteMaintenanceRunner(options: SqliteMaintenanceOptions): MaintenanceRunner {
  return new SqliteMaintenanceRunner(options);
}
