import type { Config } from '../config/load';
import type { JobName } from './lock-keys';

/** The scheduler's part of the configuration (see src/config/scheduler-settings.ts for each variable). */
export interface SchedulerConfig {
  /** `SLUICE_SCHEDULER=on`: this instance takes part. Off: `start()` does nothing. */
  readonly enabled: boolean;
  /** Interval of each job (milliseconds); 0 switches the job off on this instance. */
  readonly intervalsMs: Readonly<Record<JobName, number>>;
  /** `SLUICE_RETENTION_RAW`. */
  readonly retentionRawMs: number;
  /** `SLUICE_RETENTION_1M`. */
  readonly retention1mMs: number;
  /** `SLUICE_RETENTION_1H`. */
  readonly retention1hMs: number;
  /** `SLUICE_PARTITIONS_AHEAD_DAYS`. */
  readonly partitionsAheadDays: number;
  /** `SLUICE_JOB_TIMEOUT_MS`: statement and idle-in-transaction timeout of a run (PostgreSQL). */
  readonly jobTimeoutMs: number;
  /** `SLUICE_JOB_LOCK_TIMEOUT_MS`: lock_timeout of a run (PostgreSQL). */
  readonly jobLockTimeoutMs: number;
  /** `SLUICE_PURGE_BATCH_SIZE`. */
  readonly purgeBatchSize: number;
  /** `SLUICE_PURGE_MAX_ROWS_PER_RUN`. */
  readonly purgeMaxRowsPerRun: number;
  /** `SLUICE_COMPACT_OUTCOMES_SETTLE_MS`. */
  readonly compactOutcomesSettleMs: number;
  /** `SLUICE_COMPACT_OUTCOMES_MAX_ROWS_PER_RUN`. */
  readonly compactOutcomesMaxRowsPerRun: number;
  /** `SLUICE_METRIC_RESEND_WINDOW_MS`. */
  readonly metricResendWindowMs: number;
  /** `SLUICE_OUTCOMES` is on: the merge job corrects the stored counts it makes wrong. */
  readonly outcomes: boolean;
  /** Connect timeout of the scheduler's connections (milliseconds): `SLUICE_STORAGE_TIMEOUT_MS`. */
  readonly connectTimeoutMs: number;
}

export function schedulerConfigFrom(config: Config): SchedulerConfig {
  return {
    enabled: config.scheduler === 'on',
    intervalsMs: {
      downsample: config.jobDownsampleIntervalMs,
      purge: config.jobPurgeIntervalMs,
      partitions: config.jobPartitionsIntervalMs,
      compact_outcomes: config.jobCompactOutcomesIntervalMs,
      merge_metric_blocks: config.jobMergeMetricBlocksIntervalMs,
    },
    retentionRawMs: config.retentionRawMs,
    retention1mMs: config.retention1mMs,
    retention1hMs: config.retention1hMs,
    partitionsAheadDays: config.partitionsAheadDays,
    jobTimeoutMs: config.jobTimeoutMs,
    jobLockTimeoutMs: config.jobLockTimeoutMs,
    purgeBatchSize: config.purgeBatchSize,
    purgeMaxRowsPerRun: config.purgeMaxRowsPerRun,
    compactOutcomesSettleMs: config.compactOutcomesSettleMs,
    compactOutcomesMaxRowsPerRun: config.compactOutcomesMaxRowsPerRun,
    metricResendWindowMs: config.metricResendWindowMs,
    outcomes: config.outcomes === 'on',
    connectTimeoutMs: config.storageTimeoutMs,
  };
}
