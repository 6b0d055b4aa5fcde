/**
 * One statement-level trigger on `metric_samples` instead of two (003's invalidation log, 005's
 * stored count): both are sums over the same (name, app, minute) groups of the rows a statement
 * really inserted, so one scan of the transition table feeds both inserts. Same rows written as
 * before, in the same transaction as the samples; with `sluice.outcomes` off only the invalidation
 * log is written.
 */
export const sql = `
DROP TRIGGER metric_samples_count_stored ON metric_samples;
DROP TRIGGER metric_samples_log_rollup_invalidations ON metric_samples;
DROP FUNCTION sluice_count_stored_samples();
DROP FUNCTION sluice_log_rollup_invalidations();

CREATE FUNCTION sluice_log_stored_samples() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF current_setting('sluice.outcomes', true) IS DISTINCT FROM 'off' THEN
    WITH groups AS (
      SELECT name, app, ts - ts % 60000 AS bucket, count(*) AS samples FROM inserted_samples
       GROUP BY 1, 2, 3
    ), logged AS (
      INSERT INTO metric_rollup_invalidations (name, app, bucket) SELECT name, app, bucket FROM groups
    )
    INSERT INTO event_outcomes (app, minute, type, outcome, reason, origin, count)
    SELECT app, bucket, 'metric', 'stored', '', '', sum(samples) FROM groups GROUP BY 1, 2;
  ELSE
    INSERT INTO metric_rollup_invalidations (name, app, bucket)
    SELECT DISTINCT name, app, ts - ts % 60000 FROM inserted_samples;
  END IF;
  RETURN NULL;
END
$fn$;

CREATE TRIGGER metric_samples_log_stored
  AFTER INSERT ON metric_samples
  REFERENCING NEW TABLE AS inserted_samples
  FOR EACH STATEMENT EXECUTE FUNCTION sluice_log_stored_samples();
`;
