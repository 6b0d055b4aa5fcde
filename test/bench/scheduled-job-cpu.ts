import pg from 'pg';
import { startCollector } from './collector-process';
import { PgBackendCpu } from './pg-backend-cpu';
import { BENCH_POLLER } from './pg-bench-db';

/** How often the job's backlog is looked at while it runs (milliseconds). */
const POLL_MS = 100;

/** Every job interval of a collector, off; a job to measure is turned on by its own setting. */
const JOBS_OFF = {
  SLUICE_JOB_DOWNSAMPLE_INTERVAL_MS: '0',
  SLUICE_JOB_PURGE_INTERVAL_MS: '0',
  SLUICE_JOB_PARTITIONS_INTERVAL_MS: '0',
  SLUICE_JOB_COMPACT_OUTCOMES_INTERVAL_MS: '0',
  SLUICE_JOB_MERGE_METRIC_BLOCKS_INTERVAL_MS: '0',
} as const;

/** One scheduled job's work on what a database holds, measured once. */
export interface ScheduledJobCpu {
  /** PostgreSQL CPU of the scheduler's backends until the backlog was empty (seconds). */
  readonly cpuSeconds: number;
  /** The backlog when the job started (what `backlog` counted). */
  readonly backlog: number;
}

export interface ScheduledJobRun {
  /** What the job works through; done at 0 (a statement of the job's own transactions' effect). */
  readonly backlogSql: string;
  /** The job's settings on a collector whose other jobs are off, e.g. its interval at 1 s. */
  readonly env: Readonly<Record<string, string>>;
  /** Which job, in the error when it does not finish. */
  readonly what: string;
}

/**
 * Runs one scheduled job over `databaseUrl` until its backlog is empty and returns what it cost
 * the database: a second collector with only that job on, the CPU of the database's
 * `sluice-scheduler` backends from its start until `backlogSql` counts 0 (the measured collector's
 * own scheduler, with its defaults, may take a part of the same work meanwhile). Throws when the
 * backlog is not empty within `timeoutMs`.
 */
export async function measureScheduledJob(
  databaseUrl: string,
  job: ScheduledJobRun,
  timeoutMs: number,
): Promise<ScheduledJobCpu> {
  const poller = new pg.Client({ connectionString: databaseUrl, application_name: BENCH_POLLER });
  await poller.connect();
  const backlog = async (): Promise<number> =>
    Number((await poller.query<{ n: string }>(job.backlogSql)).rows[0]?.n);
  const backends = new PgBackendCpu(databaseUrl);
  try {
    const start = await backlog();
    await backends.start();
    const worker = await startCollector({
      databaseUrl,
      ack: 'queued',
      extraEnv: { ...JOBS_OFF, ...job.env },
    });
    try {
      const deadline = Date.now() + timeoutMs;
      while ((await backlog()) > 0) {
        if (Date.now() > deadline) throw new Error(`${job.what}: work left after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
      // Read while the scheduler's backends still live: a backend gone is counted to its last listing.
      await backends.stop();
    } finally {
      await worker.stop();
    }
    return { cpuSeconds: backends.byApplication().get('sluice-scheduler') ?? 0, backlog: start };
  } finally {
    await poller.end();
  }
}
