import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * Instruments of the scheduler, fed by src/scheduler. Labels are bounded: `job` is one of the
 * fixed job names (downsample, purge, partitions), `result` is `success` or `error`. Each
 * instance counts only what it did itself; sum (or max, for the timestamp) across instances for
 * the cluster view.
 */
export function createSchedulerMetrics(registry: Registry) {
  const r = [registry];
  return {
    runs: new Counter({
      name: 'sluice_scheduler_runs_total',
      help: 'Job runs this instance claimed and ran, by job and result (error: the job failed or its transaction broke).',
      labelNames: ['job', 'result'] as const,
      registers: r,
    }),
    lockNotAcquired: new Counter({
      name: 'sluice_scheduler_lock_not_acquired_total',
      help: 'Attempts that found the job’s advisory lock held by another session (another instance is running it).',
      labelNames: ['job'] as const,
      registers: r,
    }),
    claimLost: new Counter({
      name: 'sluice_scheduler_claim_lost_total',
      help: 'Attempts that got the lock but found the interval already claimed (the job already ran this interval).',
      labelNames: ['job'] as const,
      registers: r,
    }),
    runDuration: new Histogram({
      name: 'sluice_scheduler_run_duration_seconds',
      help: 'Duration of a job run this instance ran, from claim to commit, by job.',
      labelNames: ['job'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: r,
    }),
    rows: new Counter({
      name: 'sluice_scheduler_rows_total',
      help: 'What a successful run touched, by job: rollup rows inserted or changed (downsample), rows deleted (purge; partitions dropped whole are logged, not counted), partitions created (partitions).',
      labelNames: ['job'] as const,
      registers: r,
    }),
    lastSuccess: new Gauge({
      name: 'sluice_scheduler_last_success_timestamp_seconds',
      help: 'When this instance last finished a successful run of the job (Unix seconds, process clock).',
      labelNames: ['job'] as const,
      registers: r,
    }),
  };
}

export type SchedulerMetrics = ReturnType<typeof createSchedulerMetrics>;
