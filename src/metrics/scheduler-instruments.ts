import { type Registry } from 'prom-client';
import { counter, gauge, histogram } from './define';

/**
 * Instruments of the scheduler, fed by src/scheduler. Labels are bounded: `job_name` is one of the
 * fixed job names (downsample, purge, partitions, compact_outcomes, merge_metric_blocks), `result` is `success` or `error`. The label is
 * not `job`: Prometheus gives every scraped series the `job` of its scrape config and renames a
 * `job` label of the target's own to `exported_job`. Each instance counts only what it did
 * itself; sum (or max, for the timestamp) across instances for the cluster view.
 */
export function createSchedulerMetrics(registry: Registry) {
  return {
    runs: counter(
      registry,
      'sluice_scheduler_runs_total',
      'Job runs this instance claimed and ran, by job and result (error: the job failed or its transaction broke).',
      ['job_name', 'result'],
    ),
    lockNotAcquired: counter(
      registry,
      'sluice_scheduler_lock_not_acquired_total',
      'Attempts that found the job’s advisory lock held by another session (another instance is running it).',
      ['job_name'],
    ),
    claimLost: counter(
      registry,
      'sluice_scheduler_claim_lost_total',
      'Attempts that got the lock but found the interval already claimed (the job already ran this interval).',
      ['job_name'],
    ),
    runDuration: histogram(
      registry,
      'sluice_scheduler_run_duration_seconds',
      'Duration of a job run this instance ran, from claim to commit, by job.',
      ['job_name'],
      [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    ),
    rows: counter(
      registry,
      'sluice_scheduler_rows_total',
      'What a successful run touched, by job: rollup rows inserted or changed (downsample), rows deleted (purge; partitions dropped whole are logged, not counted), partitions created (partitions), loss-map rows folded into one row per key (compact_outcomes; the rows written are logged), metric blocks deleted and written (merge_metric_blocks; the groups and the resent copies removed are logged).',
      ['job_name'],
    ),
    skipped: counter(
      registry,
      'sluice_scheduler_skipped_total',
      'What a successful run could not process and left out, by job: rollup buckets whose samples cannot be folded (downsample; each logged once, the other buckets folded).',
      ['job_name'],
    ),
    longestSlice: gauge(
      registry,
      'sluice_scheduler_longest_slice_seconds',
      'SQLite: the longest step of the job’s last run on this instance (one statement or short transaction), during which the event loop, and every request, waited; the job yields to the event loop between two steps.',
      ['job_name'],
    ),
    lastSuccess: gauge(
      registry,
      'sluice_scheduler_last_success_timestamp_seconds',
      'When this instance last finished a successful run of the job (Unix seconds, process clock).',
      ['job_name'],
    ),
    interval: gauge(
      registry,
      'sluice_scheduler_interval_seconds',
      'Interval of each job this instance schedules (its SLUICE_JOB_*_INTERVAL_MS): how old the last success may be before runs were missed.',
      ['job_name'],
    ),
  };
}

export type SchedulerMetrics = ReturnType<typeof createSchedulerMetrics>;
