import type {
  MaintenanceJob,
  MaintenanceRunContext,
  MaintenanceSession,
  DeleteLimits,
  DeleteResult,
} from '../storage/maintenance';
import type { JobName } from './lock-keys';

export type { DeleteLimits, DeleteResult, MaintenanceSession };

/**
 * What a job gets for one run: the database time, the maintenance session (the one port jobs
 * depend on; see src/storage/maintenance.ts), an abort signal and a logger.
 */
export type JobContext = MaintenanceRunContext;

export interface JobResult {
  /** Rows touched (rollup rows changed, rows deleted, partitions created): the `rows` metric. */
  readonly rows: number;
  /**
   * What the run could not process and left out (downsample: buckets whose fold failed, see
   * `FoldResult.skipped`): the `skipped` metric. Absent: nothing.
   */
  readonly skipped?: number;
  /** Figures for the log line of the run. */
  readonly detail?: Readonly<Record<string, number | boolean>>;
  /** Called once the run has committed (never for a run rolled back): what it may count as done. */
  readonly committed?: () => void;
}

/** One maintenance job. Runs at most once per interval window cluster-wide (see the maintenance runners). */
export interface Job extends MaintenanceJob<JobResult> {
  readonly name: JobName;
}
