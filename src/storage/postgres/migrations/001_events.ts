/**
 * Both tables are partitioned by UTC day on `ts` (epoch milliseconds); partitions are created by
 * `ensurePartitions`, and the DEFAULT partition holds whatever falls outside them, so an insert
 * never fails for want of a partition. The primary key makes `(id, ts)` unique, so
 * `ON CONFLICT DO NOTHING` turns a retried batch into a no-op; its column order is `(ts, id)` so
 * the same index also serves the newest-first keyset read `ORDER BY ts DESC, id DESC` and
 * appends near the right edge as time advances. Indexes are few on purpose: each one is paid on
 * every write.
 */
export const sql = `
CREATE TABLE events (
  id uuid NOT NULL,
  ts bigint NOT NULL,
  type text NOT NULL,
  app text NOT NULL,
  name text NOT NULL,
  version text,
  env text,
  message text,
  error_message text,
  error_kind text,
  error_stack text,
  attributes jsonb NOT NULL,
  PRIMARY KEY (ts, id)
) PARTITION BY RANGE (ts);
CREATE TABLE events_default PARTITION OF events DEFAULT;
CREATE INDEX events_app_ts_id ON events (app, ts DESC, id DESC);

-- Metric samples are the bulk of the volume: a narrow row, attributes as canonical JSON text
-- (no jsonb parse on write). A summary has value NULL and count/min/max/sum set; avg is sum/count.
CREATE TABLE metric_samples (
  id uuid NOT NULL,
  ts bigint NOT NULL,
  app text NOT NULL,
  name text NOT NULL,
  version text,
  env text,
  value double precision,
  count bigint,
  min double precision,
  max double precision,
  sum double precision,
  message text,
  attributes text NOT NULL,
  PRIMARY KEY (ts, id)
) PARTITION BY RANGE (ts);
CREATE TABLE metric_samples_default PARTITION OF metric_samples DEFAULT;
CREATE INDEX metric_samples_name_ts ON metric_samples (name, ts);
`;
