/**
 * The rollup invalidation log: which (name, app, 1-minute bucket) of `metric_samples` received
 * rows since the downsample job last folded them. It is written by the database itself, by a
 * statement-level trigger over the rows the statement really inserted (its transition table), so
 * every writer records it in the same transaction as its rows: `COPY`, the deduplicating
 * `INSERT … ON CONFLICT DO NOTHING` (a duplicate is not inserted, so it is not logged), the
 * `unnest` path, rows moved out of the default partition, and a collector of an older version
 * during a rolling upgrade. One row per distinct bucket per statement; no key and no index, so an
 * insert never waits on another writer's uncommitted row. The job takes the rows it folds with
 * `DELETE … RETURNING` in its own transaction, so a row committed after that statement's snapshot
 * is left for the next run.
 *
 * Seeded with the buckets written since an hour before the last watermark of the range-based job
 * this replaces (all samples when it never ran), so nothing written before the upgrade is missed.
 */
export const sql = `
CREATE TABLE metric_rollup_invalidations (
  name text NOT NULL,
  app text NOT NULL,
  bucket bigint NOT NULL
);

CREATE FUNCTION sluice_log_rollup_invalidations() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO metric_rollup_invalidations (name, app, bucket)
  SELECT DISTINCT name, app, ts - ts % 60000 FROM inserted_samples;
  RETURN NULL;
END
$fn$;

CREATE TRIGGER metric_samples_log_rollup_invalidations
  AFTER INSERT ON metric_samples
  REFERENCING NEW TABLE AS inserted_samples
  FOR EACH STATEMENT EXECUTE FUNCTION sluice_log_rollup_invalidations();

INSERT INTO metric_rollup_invalidations (name, app, bucket)
SELECT DISTINCT name, app, ts - ts % 60000 FROM metric_samples
 WHERE ts >= COALESCE((SELECT watermark_ms - 3600000 FROM rollup_watermarks WHERE rollup = 'metric_rollups'), 0);
`;
