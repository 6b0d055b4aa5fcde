import { duration, integer, oneOf } from './parsers';
import { setting } from './setting';

const DAY_MS = 86_400_000;

/**
 * Settings of the scheduler (downsample, purge, partition and loss-map compaction jobs; see src/scheduler). Raw
 * retention is `SLUICE_RETENTION_RAW` (core settings); partitions ahead is
 * `SLUICE_PARTITIONS_AHEAD_DAYS`. Units: `_MS` milliseconds.
 */
export const SCHEDULER_SETTINGS = {
  scheduler: setting({
    env: 'SLUICE_SCHEDULER',
    default: 'on',
    doc: 'Run the maintenance jobs on this instance (each still runs once per interval cluster-wide).',
    parse: oneOf(['on', 'off'] as const),
  }),
  jobDownsampleIntervalMs: setting({
    env: 'SLUICE_JOB_DOWNSAMPLE_INTERVAL_MS',
    default: '60000',
    doc: 'Interval of the downsample job (metric rollups at 1m and 1h); 0 disables it here.',
    parse: duration(0, DAY_MS, 'ms'),
  }),
  jobPurgeIntervalMs: setting({
    env: 'SLUICE_JOB_PURGE_INTERVAL_MS',
    default: '600000',
    doc: 'Interval of the purge job (data past its retention); 0 disables it here.',
    parse: duration(0, DAY_MS, 'ms'),
  }),
  jobPartitionsIntervalMs: setting({
    env: 'SLUICE_JOB_PARTITIONS_INTERVAL_MS',
    default: '3600000',
    doc: 'PostgreSQL: interval of the job creating daily partitions ahead of time; 0 disables it here.',
    parse: duration(0, DAY_MS, 'ms'),
  }),
  jobCompactOutcomesIntervalMs: setting({
    env: 'SLUICE_JOB_COMPACT_OUTCOMES_INTERVAL_MS',
    default: '60000',
    doc: 'Interval of the job folding the loss map’s settled minutes into one row per key; 0 disables it here.',
    parse: duration(0, DAY_MS, 'ms'),
  }),
  jobMergeMetricBlocksIntervalMs: setting({
    env: 'SLUICE_JOB_MERGE_METRIC_BLOCKS_INTERVAL_MS',
    default: '5000',
    doc: 'PostgreSQL: interval of the job rewriting each minute’s metric blocks without their resent copies, correcting the loss map’s stored counts; 0 disables it here.',
    parse: duration(0, DAY_MS, 'ms'),
  }),
  metricResendWindowMs: setting({
    env: 'SLUICE_METRIC_RESEND_WINDOW_MS',
    default: '120000',
    doc: 'PostgreSQL: a minute’s metric blocks are rewritten (resent copies removed, counts corrected) once the minute started this long ago; a later resend is merged on read until the next run.',
    parse: duration(0, DAY_MS, 'ms'),
  }),
  jobTimeoutMs: setting({
    env: 'SLUICE_JOB_TIMEOUT_MS',
    default: '60000',
    doc: 'PostgreSQL: statement_timeout and idle-in-transaction timeout of a job run’s transaction.',
    parse: duration(100, 3_600_000, 'ms'),
  }),
  jobLockTimeoutMs: setting({
    env: 'SLUICE_JOB_LOCK_TIMEOUT_MS',
    default: '1000',
    doc: 'PostgreSQL: lock_timeout of a job run (e.g. dropping a partition); writers queue behind such a wait.',
    parse: duration(10, 60_000, 'ms'),
  }),
  retention1mMs: setting({
    env: 'SLUICE_RETENTION_1M',
    default: '30d',
    doc: 'Retention of the 1-minute metric rollups.',
    parse: duration(3_600_000, 3650 * DAY_MS, 'd'),
  }),
  retention1hMs: setting({
    env: 'SLUICE_RETENTION_1H',
    default: '400d',
    doc: 'Retention of the 1-hour metric rollups.',
    parse: duration(3_600_000, 36500 * DAY_MS, 'd'),
  }),
  purgeBatchSize: setting({
    env: 'SLUICE_PURGE_BATCH_SIZE',
    default: '5000',
    doc: 'Rows removed by one purge DELETE statement (SQLite: at most 1000, so none holds the event loop for long).',
    parse: integer(1, 1_000_000),
  }),
  purgeMaxRowsPerRun: setting({
    env: 'SLUICE_PURGE_MAX_ROWS_PER_RUN',
    default: '100000',
    doc: 'Most rows one purge run deletes per table (the rest waits for the next run): keeps each run short.',
    parse: integer(1, 100_000_000),
  }),
  compactOutcomesSettleMs: setting({
    env: 'SLUICE_COMPACT_OUTCOMES_SETTLE_MS',
    default: '60000',
    doc: 'A loss-map minute is folded once it ended at least this long ago (60000: the current minute and the one before are left as written).',
    parse: duration(0, DAY_MS, 'ms'),
  }),
  compactOutcomesMaxRowsPerRun: setting({
    env: 'SLUICE_COMPACT_OUTCOMES_MAX_ROWS_PER_RUN',
    default: '100000',
    doc: 'Most loss-map rows one compaction run folds (it stops after the minute reaching it; the rest waits for the next run).',
    parse: integer(1, 100_000_000),
  }),
} as const;
