/**
 * Tables of the scheduler (src/scheduler) and of the metric rollups it maintains.
 *
 * `scheduler_runs` is both the claim and the run history: one row per (job, interval window). A
 * run inserts its row under the job's advisory lock, in the same transaction as the job's writes,
 * so the row, the writes and the lock release commit together; a run whose session dies leaves no
 * row and no writes. A claim succeeds only when no run of the job started in the current window
 * or later (the index serves that check); the primary key is the last line of defence against a
 * second run in one window. Times are epoch milliseconds of the database clock; `claimed_at`
 * is the server's own clock whatever the scheduler was told (for operators, and for tests that
 * check the window came from the database clock).
 *
 * Rollups hold one row per (name, bucket, app): `bucket` is the bucket start (epoch ms, UTC
 * aligned), count/min/max/sum merge raw samples (count 1) and SDK summaries; avg is sum / count.
 * The key order serves `GET /v1/metrics` (name, time range, oldest first); the `bucket` index
 * serves the purge. `rollup_watermarks` remembers how far the downsample job has folded.
 */
/** One rollup table and its purge index: both resolutions have the same shape. */
function rollupTable(resolution: '1m' | '1h'): string {
  return `CREATE TABLE metric_rollups_${resolution} (
  name text NOT NULL,
  bucket bigint NOT NULL,
  app text NOT NULL,
  count bigint NOT NULL,
  min double precision NOT NULL,
  max double precision NOT NULL,
  sum double precision NOT NULL,
  PRIMARY KEY (name, bucket, app)
);
CREATE INDEX metric_rollups_${resolution}_bucket ON metric_rollups_${resolution} (bucket);
`;
}

export const sql = `
CREATE TABLE scheduler_runs (
  job text NOT NULL,
  slot_ms bigint NOT NULL,
  interval_ms bigint NOT NULL,
  instance text NOT NULL,
  started_ms bigint NOT NULL,
  finished_ms bigint,
  duration_ms double precision,
  rows bigint,
  error text,
  claimed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (job, slot_ms)
);
CREATE INDEX scheduler_runs_job_started ON scheduler_runs (job, started_ms);

${rollupTable('1m')}
${rollupTable('1h')}
CREATE TABLE rollup_watermarks (
  rollup text PRIMARY KEY,
  watermark_ms bigint NOT NULL
);
`;
