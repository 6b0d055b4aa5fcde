import { measureScheduledJob } from './scheduled-job-cpu';

/** The rollup fold of what a database holds, measured once. */
export interface RollupFold {
  /** PostgreSQL CPU of the scheduler's backends until the log was empty (seconds). */
  readonly cpuSeconds: number;
  /** Invalidation log entries (app, name, minute) the fold started with. */
  readonly buckets: number;
}

/**
 * Folds every minute the rollup invalidation log names (raw samples to 1m, 1m to 1h rollups) and
 * returns what it cost the database: the downsample job every second on a collector of its own
 * (`measureScheduledJob`), until the log is empty (the log's entries go in the transaction that
 * folds them: none left, every fold committed). Each minute is folded once here; the default
 * interval (60 s) folds a minute again at each run while it still receives points, so in a long
 * run this is the least the fold costs.
 */
export async function measureRollupFold(databaseUrl: string, timeoutMs: number): Promise<RollupFold> {
  const r = await measureScheduledJob(
    databaseUrl,
    {
      what: 'rollup fold',
      backlogSql: 'SELECT count(*) AS n FROM metric_rollup_invalidations',
      env: { SLUICE_JOB_DOWNSAMPLE_INTERVAL_MS: '1000' },
    },
    timeoutMs,
  );
  return { cpuSeconds: r.cpuSeconds, buckets: r.backlog };
}
