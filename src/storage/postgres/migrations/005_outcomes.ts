/**
 * The loss map (docs/ARCHITECTURE.md, "The loss map"). `event_outcomes` is append-only: every
 * writer adds its own rows (one per key and transaction) and reads sum them, so no two writers
 * ever wait on one row. `stored` rows are written by the database itself, by statement-level
 * triggers over the rows each statement really inserted (as the rollup invalidation log is), so
 * they commit with the rows they count and a duplicate skipped by the dedupe path is not counted.
 * A writer that sets `sluice.outcomes` to `off` for its session (`SLUICE_OUTCOMES=off`) skips them.
 * `client_reports` holds the ids of the SDK reports already counted, so a report sent twice is
 * counted once; `minute` (of receipt) is what the purge job goes by.
 */
export const sql = `
CREATE TABLE event_outcomes (
  app text NOT NULL,
  minute bigint NOT NULL,
  type text NOT NULL,
  outcome text NOT NULL,
  reason text NOT NULL,
  origin text NOT NULL,
  count bigint NOT NULL
);
CREATE INDEX event_outcomes_app_minute ON event_outcomes (app, minute);
CREATE INDEX event_outcomes_minute ON event_outcomes (minute);

CREATE TABLE client_reports (
  id uuid PRIMARY KEY,
  minute bigint NOT NULL
);
CREATE INDEX client_reports_minute ON client_reports (minute);

CREATE FUNCTION sluice_count_stored_events() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF current_setting('sluice.outcomes', true) IS DISTINCT FROM 'off' THEN
    INSERT INTO event_outcomes (app, minute, type, outcome, reason, origin, count)
    SELECT app, ts - ts % 60000, type, 'stored', '', '', count(*) FROM inserted_events
     GROUP BY 1, 2, 3;
  END IF;
  RETURN NULL;
END
$fn$;

CREATE FUNCTION sluice_count_stored_samples() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF current_setting('sluice.outcomes', true) IS DISTINCT FROM 'off' THEN
    INSERT INTO event_outcomes (app, minute, type, outcome, reason, origin, count)
    SELECT app, ts - ts % 60000, 'metric', 'stored', '', '', count(*) FROM inserted_samples
     GROUP BY 1, 2;
  END IF;
  RETURN NULL;
END
$fn$;

CREATE TRIGGER events_count_stored
  AFTER INSERT ON events
  REFERENCING NEW TABLE AS inserted_events
  FOR EACH STATEMENT EXECUTE FUNCTION sluice_count_stored_events();

CREATE TRIGGER metric_samples_count_stored
  AFTER INSERT ON metric_samples
  REFERENCING NEW TABLE AS inserted_samples
  FOR EACH STATEMENT EXECUTE FUNCTION sluice_count_stored_samples();
`;
