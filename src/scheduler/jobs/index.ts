import type { Job } from '../job';
import type { SchedulerConfig } from '../scheduler-config';
import { compactOutcomesJob } from './compact-outcomes';
import { downsampleJob } from './downsample';
import { partitionsJob } from './partitions';
import { purgeJob } from './purge';
import { mergeMetricBlocksJob } from './merge-metric-blocks';

export { downsampleJob, rawSourceBefore } from './downsample';
export { purgeCutoffs, purgeJob } from './purge';
export { partitionsJob } from './partitions';
export { compactionRange, compactOutcomesJob } from './compact-outcomes';
export { mergeMetricBlocksJob } from './merge-metric-blocks';

/**
 * On SQLite each fold blocks the event loop (better-sqlite3 is synchronous): smaller folds, the
 * same backlog per run.
 */
const SQLITE_DOWNSAMPLE = { maxEntriesPerFold: 2_000, maxFoldsPerRun: 250 };

/** The jobs a storage kind runs: SQLite has no partitions, and no metric blocks to merge. */
export function standardJobs(
  config: SchedulerConfig,
  kind: 'postgres' | 'sqlite',
  onMetricCopiesRemoved?: (copies: number) => void,
): Job[] {
  const jobs = [
    downsampleJob({
      retention1mMs: config.retention1mMs,
      ...(kind === 'sqlite' ? SQLITE_DOWNSAMPLE : {}),
    }),
    purgeJob({
      retentionRawMs: config.retentionRawMs,
      retention1mMs: config.retention1mMs,
      retention1hMs: config.retention1hMs,
      limits: { batchSize: config.purgeBatchSize, maxRows: config.purgeMaxRowsPerRun },
    }),
    compactOutcomesJob({
      settleMs: config.compactOutcomesSettleMs,
      maxRowsPerRun: config.compactOutcomesMaxRowsPerRun,
      retentionRawMs: config.retentionRawMs,
    }),
  ];
  if (kind === 'postgres') {
    jobs.push(partitionsJob({ aheadDays: config.partitionsAheadDays }));
    jobs.push(
      mergeMetricBlocksJob({
        resendWindowMs: config.metricResendWindowMs,
        correctCounts: config.outcomes,
        ...(onMetricCopiesRemoved === undefined ? {} : { onCopiesRemoved: onMetricCopiesRemoved }),
      }),
    );
  }
  return jobs;
}
