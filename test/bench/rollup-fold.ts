import pg from 'pg';
import { startCollector } from './collector-process';
import { PgBackendCpu } from './pg-backend-cpu';
import { BENCH_POLLER } from './pg-bench-db';

/** How often the invalidation log is looked at while the fold runs (milliseconds). */
const POLL_MS = 100;

/** The rollup fold of what a database holds, measured once. */
export interface RollupFold {
  /** PostgreSQL CPU of the scheduler's backends until the log was empty (seconds). */
  readonly cpuSeconds: number;
  /** Invalidation log entries (app, name, minute) the fold started with. */
  readonly buckets: number;
}

/**
 * Folds every minute the rollup invalidation log names (raw samples to 1m, 1m to 1h rollups) and
 * returns what it cost the database: a second collector on `databaseUrl` whose downsample job runs
 * every second (`SLUICE_JOB_DOWNSAMPLE_INTERVAL_MS=1000`, its other jobs off), the CPU of the
 * database's `sluice-scheduler` backends from its start until the log is empty (the measured
 * collector's own scheduler, with its defaults, may take a part of the same fold meanwhile). Each minute is folded once
 * here; the default interval (60 s) folds a minute again at each run while it still receives
 * points, so in a long run this is the least the fold costs. Throws when the log is not empty
 * within `timeoutMs`.
 */
export async function measureRollupFold(databaseUrl: string, timeoutMs: number): Promise<RollupFold> {
  const log = new pg.Client({ connectionString: databaseUrl, application_name: BENCH_POLLER });
  await log.connect();
  const entries = async (): Promise<number> =>
    Number(
      (await log.query<{ n: string }>('SELECT count(*) AS n FROM metric_rollup_invalidations')).rows[0]?.n,
    );
  const backends = new PgBackendCpu(databaseUrl);
  try {
    const buckets = await entries();
    await backends.start();
    const folder = await startCollector({
      databaseUrl,
      ack: 'queued',
      // The fold alone: the other jobs are off in this collector.
      extraEnv: {
        SLUICE_JOB_DOWNSAMPLE_INTERVAL_MS: '1000',
        SLUICE_JOB_PURGE_INTERVAL_MS: '0',
        SLUICE_JOB_PARTITIONS_INTERVAL_MS: '0',
        SLUICE_JOB_COMPACT_OUTCOMES_INTERVAL_MS: '0',
      },
    });
    try {
      const deadline = Date.now() + timeoutMs;
      // The log's entries go in the transaction that folds them: none left, every fold committed.
      while ((await entries()) > 0) {
        if (Date.now() > deadline)
          throw new Error(`rollup fold: the invalidation log still has entries after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
      // Read while the scheduler's backends still live: a backend gone is counted to its last listing.
      await backends.stop();
    } finally {
      await folder.stop();
    }
    return { cpuSeconds: backends.byApplication().get('sluice-scheduler') ?? 0, buckets };
  } finally {
    await log.end();
  }
}
