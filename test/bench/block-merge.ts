import { measureScheduledJob } from './scheduled-job-cpu';

/** The merge of what a database's metric blocks hold, measured once. */
export interface BlockMergeCpu {
  /** PostgreSQL CPU of the scheduler's backends until no block was unmerged (seconds). */
  readonly cpuSeconds: number;
  /** Unmerged blocks when the merge started. */
  readonly blocks: number;
}

/**
 * Merges every unmerged metric block group (`merge_metric_blocks`, docs/metric-storage.md) and
 * returns what it cost the database: the merge job every second with no resend window, on a
 * collector of its own (`measureScheduledJob`), until no block is unmerged. The collector's
 * defaults merge each group once, two minutes after its minute started (the resend window), which
 * a window of a few seconds never sees.
 */
export async function measureBlockMerge(databaseUrl: string, timeoutMs: number): Promise<BlockMergeCpu> {
  const r = await measureScheduledJob(
    databaseUrl,
    {
      what: 'block merge',
      backlogSql: 'SELECT count(*) AS n FROM metric_blocks WHERE NOT merged',
      env: { SLUICE_JOB_MERGE_METRIC_BLOCKS_INTERVAL_MS: '1000', SLUICE_METRIC_RESEND_WINDOW_MS: '0' },
    },
    timeoutMs,
  );
  return { cpuSeconds: r.cpuSeconds, blocks: r.backlog };
}
