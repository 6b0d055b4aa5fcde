import type { Clock } from '../clock';
import type { Config } from '../config/load';
import { PeriodicTask } from '../lifecycle/periodic-task';
import { createSchedulerMetrics } from '../metrics/scheduler-instruments';
import { schedulerConfigFrom } from '../scheduler/scheduler-config';
import type { OpenedStorage } from './storage';
import type { Logger } from '../log/logger';
import type { SchedulerMetrics } from '../metrics/scheduler-instruments';
import type { Metrics } from '../metrics/instruments';
import os from 'node:os';
import type { Job } from '../scheduler/job';
import { standardJobs } from '../scheduler/jobs';
import type { RunBackend } from '../scheduler/run-backend';
import { Scheduler } from '../scheduler/scheduler';
import type { SchedulerConfig } from '../scheduler/scheduler-config';
import { createPostgresMaintenanceRunner } from '../storage/postgres';
import { createSqliteMaintenanceRunner, type SqliteStorage } from '../storage/sqlite';

/** Where the jobs run. */
export type SchedulerStorage =
  /** Tier 2+: the scheduler opens its own connections (one per job run) to this database. */
  | { readonly kind: 'postgres'; readonly connectionString: string }
  /** Tier 1: in-process, on the storage's own connection. */
  | { readonly kind: 'sqlite'; readonly storage: SqliteStorage };

export interface SchedulerOptions {
  readonly storage: SchedulerStorage;
  readonly config: SchedulerConfig;
  /** Process clock: when this instance attempts. Whether a job runs is decided on the database clock. */
  readonly clock: Clock;
  /**
   * Tests only: stands in for the database clock (PostgreSQL `now()`) in the claim and in the
   * jobs' time. Default: the database's own clock on PostgreSQL, `clock` on SQLite.
   */
  readonly databaseClock?: Clock;
  readonly logger: Logger;
  readonly metrics: SchedulerMetrics;
  /** Recorded with each run (`scheduler_runs.instance`). Default `hostname:pid`. */
  readonly instance?: string;
  /** Tests only: replaces or wraps the standard jobs. */
  readonly jobs?: (standard: readonly Job[]) => readonly Job[];
  /** Told the resent metric samples each merge run removed (PostgreSQL; see the merge job). */
  readonly onMetricCopiesRemoved?: (copies: number) => void;
  /** 0..1, spreads attempt times. Default Math.random. */
  readonly random?: () => number;
}

export interface SchedulerHandle {
  /** Idempotent. Starts the job timers (nothing when the config disables the scheduler). */
  start(): void;
  /** Idempotent. Clears the timers, waits for a run in flight, closes the scheduler's connections. */
  close(): Promise<void>;
}

/** Default instance id recorded with runs: host and process. */
export function defaultInstanceId(): string {
  return `${os.hostname()}:${process.pid}`;
}

/** Builds the scheduler; it does nothing until `start()`. See src/storage/maintenance.ts for the protocol. */
export function createScheduler(options: SchedulerOptions): SchedulerHandle {
  const { config } = options;
  const logger = options.logger.child({ component: 'scheduler' });
  const instance = options.instance ?? defaultInstanceId();
  const standard = standardJobs(config, options.storage.kind, options.onMetricCopiesRemoved);
  const jobs = (options.jobs ? options.jobs(standard) : standard)
    .map((job) => ({ job, intervalMs: config.intervalsMs[job.name] }))
    .filter((j) => config.enabled && j.intervalMs > 0);

  let backend: RunBackend;
  if (options.storage.kind === 'postgres') {
    backend = createPostgresMaintenanceRunner({
      connectionString: options.storage.connectionString,
      connectTimeoutMs: config.connectTimeoutMs,
      jobTimeoutMs: config.jobTimeoutMs,
      lockTimeoutMs: config.jobLockTimeoutMs,
      instance,
      maxConnections: Math.max(1, jobs.length),
      databaseClock: options.databaseClock,
      logger,
    });
  } else {
    backend = createSqliteMaintenanceRunner({
      maintenance: options.storage.storage.maintenance,
      instance,
      clock: options.databaseClock ?? options.clock,
      logger,
      onRun: (job, ms) => options.metrics.longestSlice.set({ job_name: job }, ms / 1000),
    });
  }
  const scheduler = new Scheduler({
    backend,
    jobs,
    clock: options.clock,
    logger,
    metrics: options.metrics,
    random: options.random,
  });
  return { start: () => scheduler.start(), close: () => scheduler.close() };
}

/**
 * The jobs of a process that writes (a direct collector, or a tier-4 worker), started: the
 * scheduler, and where it is switched off here, partitions still made ahead on PostgreSQL
 * (another instance may not exist). Returns what the shutdown sequence closes, in order.
 */
export function startJobs(
  config: Config,
  storage: OpenedStorage,
  clock: Clock,
  logger: Logger,
  metrics: Pick<Metrics, 'registry' | 'eventsDeduplicated'>,
): Array<{ name: string; close(): Promise<void> }> {
  const schedulerConfig = schedulerConfigFrom(config);
  const scheduler = createScheduler({
    storage:
      storage.kind === 'postgres'
        ? { kind: 'postgres', connectionString: config.databaseUrl ?? '' }
        : { kind: 'sqlite', storage },
    config: schedulerConfig,
    clock,
    logger,
    metrics: createSchedulerMetrics(metrics.registry),
    // A resent metric sample the merge job removes is a duplicate the database found, as one a
    // write refuses is.
    onMetricCopiesRemoved: (n) => metrics.eventsDeduplicated.inc(n),
  });
  scheduler.start();
  const closers = [{ name: 'scheduler', close: () => scheduler.close() }];
  if (storage.kind === 'postgres' && !schedulerConfig.enabled) {
    const partitions = new PeriodicTask('partitions', 3_600_000, () => storage.ensurePartitions(), logger);
    partitions.start();
    closers.push({ name: 'partitions', close: () => partitions.close() });
  }
  return closers;
}
