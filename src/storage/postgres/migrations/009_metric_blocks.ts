/**
 * Metric samples as blocks (docs/metric-storage.md): one row of `metric_blocks` per (app, name,
 * UTC minute) of a write, the samples' columns as arrays, and each sample's key `(ts, id)` as a row
 * of `metric_sample_keys`, written before the blocks in the same transaction. The key table's
 * primary key refuses a resent sample whatever block it would land in, as `metric_samples`' did,
 * so exactly-once stays per sample; a block pays its heap tuple and index entries once for all its
 * samples. `metric_samples` becomes a view of the blocks' samples, with the same columns plus the
 * block's `bucket`: readers that bound `bucket` as well as `ts` read only the blocks of their
 * minutes. `metric_sample_values` is the same without the text columns, for readers of the
 * numbers (raw metric reads, rollup folds): an array in a view's `unnest` is read (and the
 * attributes decompressed) whether or not the query uses its column.
 *
 * Both tables are partitioned by UTC day like `events` (keys on `ts`, blocks on `bucket`, the
 * minute of the block's samples, so a sample and its key fall in the same day). Partitions of
 * both exist for every day `metric_samples` had one, and its rows move into them here: the
 * migration rewrites every stored sample once, holding `metric_samples` until it commits
 * (docs/operations.md, "Upgrading across migration 9"). The attributes array, the widest column,
 * is compressed with lz4 where the server has it.
 */
export const sql = `
CREATE TABLE metric_sample_keys (
  ts bigint NOT NULL,
  id uuid NOT NULL,
  PRIMARY KEY (ts, id)
) PARTITION BY RANGE (ts);
CREATE TABLE metric_sample_keys_default PARTITION OF metric_sample_keys DEFAULT;

CREATE TABLE metric_blocks (
  bucket bigint NOT NULL,
  app text NOT NULL,
  name text NOT NULL,
  id uuid[] NOT NULL,
  ts bigint[] NOT NULL,
  version text[] NOT NULL,
  env text[] NOT NULL,
  value double precision[] NOT NULL,
  count bigint[] NOT NULL,
  min double precision[] NOT NULL,
  max double precision[] NOT NULL,
  sum double precision[] NOT NULL,
  message text[] NOT NULL,
  attributes text[] NOT NULL
) PARTITION BY RANGE (bucket);
DO $$ BEGIN
  ALTER TABLE metric_blocks ALTER COLUMN attributes SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN NULL;
END $$;
CREATE TABLE metric_blocks_default PARTITION OF metric_blocks DEFAULT;
CREATE INDEX metric_blocks_name_bucket ON metric_blocks (name, bucket);
CREATE INDEX metric_blocks_bucket ON metric_blocks (bucket);

DO $$
DECLARE
  p record;
BEGIN
  FOR p IN
    SELECT substring(c.relname FROM '_p([0-9]{8})$') AS day
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'metric_samples'::regclass AND c.relname ~ '_p[0-9]{8}$'
  LOOP
    EXECUTE format(
      'CREATE TABLE %I PARTITION OF metric_sample_keys FOR VALUES FROM (%s) TO (%s)',
      'metric_sample_keys_p' || p.day,
      extract(epoch FROM to_date(p.day, 'YYYYMMDD')::timestamp)::bigint * 1000,
      extract(epoch FROM to_date(p.day, 'YYYYMMDD')::timestamp + interval '1 day')::bigint * 1000);
    EXECUTE format(
      'CREATE TABLE %I PARTITION OF metric_blocks FOR VALUES FROM (%s) TO (%s)',
      'metric_blocks_p' || p.day,
      extract(epoch FROM to_date(p.day, 'YYYYMMDD')::timestamp)::bigint * 1000,
      extract(epoch FROM to_date(p.day, 'YYYYMMDD')::timestamp + interval '1 day')::bigint * 1000);
  END LOOP;
END $$;

INSERT INTO metric_sample_keys (ts, id) SELECT ts, id FROM metric_samples;
INSERT INTO metric_blocks
SELECT ts - ts % 60000, app, name,
       array_agg(id ORDER BY ts, id), array_agg(ts ORDER BY ts, id),
       array_agg(version ORDER BY ts, id), array_agg(env ORDER BY ts, id),
       array_agg(value ORDER BY ts, id), array_agg(count ORDER BY ts, id),
       array_agg(min ORDER BY ts, id), array_agg(max ORDER BY ts, id),
       array_agg(sum ORDER BY ts, id), array_agg(message ORDER BY ts, id),
       array_agg(attributes ORDER BY ts, id)
  FROM metric_samples
 GROUP BY app, name, ts - ts % 60000;
DROP TABLE metric_samples;

CREATE VIEW metric_samples AS
SELECT s.id, s.ts, b.app, b.name, s.version, s.env, s.value, s.count, s.min, s.max, s.sum, s.message,
       s.attributes, b.bucket
  FROM metric_blocks b
 CROSS JOIN LATERAL unnest(b.id, b.ts, b.version, b.env, b.value, b.count, b.min, b.max, b.sum,
                           b.message, b.attributes)
       AS s(id, ts, version, env, value, count, min, max, sum, message, attributes);

CREATE VIEW metric_sample_values AS
SELECT s.id, s.ts, b.app, b.name, s.value, s.count, s.min, s.max, s.sum, b.bucket
  FROM metric_blocks b
 CROSS JOIN LATERAL unnest(b.id, b.ts, b.value, b.count, b.min, b.max, b.sum)
       AS s(id, ts, value, count, min, max, sum);
`;
