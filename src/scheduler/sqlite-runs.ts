import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Clock } from '../clock';
import type { Logger } from '../log/logger';
import type { SqliteMaintenance } from '../storage/sqlite';
import type { DeleteLimits, DeleteResult, Job, JobOutcome, MaintenanceSession } from './job';
import type { AttemptResult, RunBackend } from './run-backend';
import { slotStart } from './slots';

type Target = Parameters<SqliteMaintenance['deleteBatch']>[0];

/**
 * Batched deletes of one target, yielding to the event loop between batches: better-sqlite3 is
 * synchronous, so one long DELETE would stall every request of this (tier 1) process.
 */
async function deleteInBatches(
  m: SqliteMaintenance,
  target: Target,
  cutoffMs: number,
  limits: DeleteLimits,
): Promise<DeleteResult> {
  let rows = 0;
  while (rows < limits.maxRows) {
    const n = Math.min(limits.batchSize, limits.maxRows - rows);
    const deleted = m.deleteBatch(target, cutoffMs, n);
    rows += deleted;
    if (deleted < n) return { rows, done: true };
    await yieldToEventLoop();
  }
  return { rows, done: false };
}

/** The maintenance port on a SQLite storage: each call its own short transaction. */
export function sqliteSession(m: SqliteMaintenance): MaintenanceSession {
  return {
    kind: 'sqlite',
    rollupWatermark: async () => m.readRollupWatermark(),
    setRollupWatermark: async (ms) => m.writeRollupWatermark(ms),
    oldestSampleTs: async () => m.oldestSampleTs(),
    async foldRollups(resolution, fromMs, toMs) {
      // Let requests in between two (synchronous) fold statements.
      await yieldToEventLoop();
      return m.foldRollups(resolution, fromMs, toMs);
    },
    async purgeRaw(cutoffMs, limits) {
      const samples = await deleteInBatches(m, 'metric_samples', cutoffMs, limits);
      const events = await deleteInBatches(m, 'events', cutoffMs, limits);
      return { rows: samples.rows + events.rows, partitionsDropped: 0, done: samples.done && events.done };
    },
    purgeRollups: (resolution, cutoffMs, limits) => deleteInBatches(m, resolution, cutoffMs, limits),
    purgeRunHistory: (cutoffMs, limits) => deleteInBatches(m, 'scheduler_runs', cutoffMs, limits),
    ensurePartitions: async () => 0,
  };
}

export interface SqliteRunOptions {
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
export class SqliteRunBackend implements RunBackend {
  private readonly never = new AbortController().signal;

  constructor(private readonly o: SqliteRunOptions) {}

  async attempt(job: Job, intervalMs: number): Promise<AttemptResult> {
    const m = this.o.maintenance;
    const nowMs = this.o.clock.now();
    const slotMs = slotStart(nowMs, intervalMs);
    if (!m.claimRun({ job: job.name, slotMs, intervalMs, instance: this.o.instance, startedMs: nowMs })) {
      return { kind: 'claim_lost', nowMs };
    }
    const started = performance.now();
    let outcome: JobOutcome | null = null;
    let error: unknown = null;
    try {
      outcome = await job.run({
        now: nowMs,
        session: sqliteSession(m),
        signal: this.never,
        logger: this.o.logger,
      });
    } catch (err) {
      error = err;
    }
    const durationMs = performance.now() - started;
    m.finishRun({
      job: job.name,
      slotMs,
      finishedMs: Math.round(nowMs + durationMs),
      durationMs,
      rows: outcome?.rows ?? null,
      error: error === null ? null : String((error as Error)?.message ?? error),
    });
    if (outcome !== null) return { kind: 'ran', slotMs, nowMs, durationMs, outcome };
    return { kind: 'job_failed', slotMs, nowMs, durationMs, error };
  }

  async close(): Promise<void> {}
}
