import type { Logger } from '../log/logger';
import type { RollupResolution } from '../storage/postgres/rollup-tables';
import type { JobName } from './lock-keys';

/** Bounds of a batched delete. */
export interface DeleteLimits {
  /** Rows per statement. */
  readonly batchSize: number;
  /** Most rows one call deletes; the rest waits for the next run. */
  readonly maxRows: number;
}

export interface DeleteResult {
  readonly rows: number;
  /** False when `maxRows` was reached and more may remain. */
  readonly done: boolean;
}

/**
 * What a job may do to the database during its run: the one port jobs depend on. On PostgreSQL
 * every call runs on the run's transaction (it commits with the claim, or not at all); on SQLite
 * each call is its own short transaction, so jobs order their calls such that any prefix leaves a
 * consistent state.
 */
export interface MaintenanceSession {
  readonly kind: 'postgres' | 'sqlite';
  /** How far downsampling has folded (epoch ms), or null before its first run. */
  rollupWatermark(): Promise<number | null>;
  setRollupWatermark(watermarkMs: number): Promise<void>;
  /** ts of the oldest stored metric sample, or null. */
  oldestSampleTs(): Promise<number | null>;
  /**
   * Recomputes the `resolution` buckets whose source rows (raw samples for 1m, 1m rollups for 1h)
   * lie in [fromMs, toMs) and replaces them; resolves to rollup rows inserted or changed.
   */
  foldRollups(resolution: RollupResolution, fromMs: number, toMs: number): Promise<number>;
  /**
   * Removes raw events and samples with ts < `cutoffMs` (a UTC midnight). PostgreSQL drops whole
   * daily partitions ending by the cutoff and deletes stragglers from the default partition in
   * batches; SQLite deletes in batches.
   */
  purgeRaw(
    cutoffMs: number,
    limits: DeleteLimits,
  ): Promise<{ rows: number; partitionsDropped: number; done: boolean }>;
  /** Removes rollup rows whose whole bucket ends at or before `cutoffMs`. */
  purgeRollups(resolution: RollupResolution, cutoffMs: number, limits: DeleteLimits): Promise<DeleteResult>;
  /** Removes run history of windows that started before `cutoffMs`. */
  purgeRunHistory(cutoffMs: number, limits: DeleteLimits): Promise<DeleteResult>;
  /** Creates missing daily partitions for the days touching [fromMs, toMs]; resolves to how many (SQLite: 0). */
  ensurePartitions(fromMs: number, toMs: number): Promise<number>;
}

export interface JobContext {
  /**
   * Time of this run (epoch ms) on the database clock, read in the run's transaction: every
   * instance agrees on it, whatever its own clock says.
   */
  readonly now: number;
  readonly session: MaintenanceSession;
  /**
   * Aborted when the run's connection failed: nothing of this run can commit any more, so stop
   * at the next step.
   */
  readonly signal: AbortSignal;
  readonly logger: Logger;
}

export interface JobOutcome {
  /** Rows touched (rollup rows changed, rows deleted, partitions created): the `rows` metric. */
  readonly rows: number;
  /** Figures for the log line of the run. */
  readonly detail?: Readonly<Record<string, number | boolean>>;
}

/** One maintenance job. Runs at most once per interval window cluster-wide (see runner backends). */
export interface Job {
  readonly name: JobName;
  run(ctx: JobContext): Promise<JobOutcome>;
}
