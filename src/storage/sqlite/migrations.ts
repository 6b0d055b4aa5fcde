/** A schema step; `version` is stored in `PRAGMA user_version`. Never renumber or edit a released one. */
export interface SqliteMigration {
  readonly version: number;
  readonly sql: string;
}

/**
 * The same two-table layout and keys as PostgreSQL (see postgres/migrations/001_events.ts), so both
 * adapters dedupe and order identically: `(id, ts)` unique per table, keyed as `(ts, id)`; ids are
 * lower-case UUID text, whose byte order equals PostgreSQL's uuid order. STRICT makes SQLite
 * enforce the column types.
 */
/** One rollup table and its purge index: both resolutions have the same shape. */
function rollupTable(resolution: '1m' | '1h'): string {
  return `CREATE TABLE metric_rollups_${resolution} (
  name TEXT NOT NULL,
  bucket INTEGER NOT NULL,
  app TEXT NOT NULL,
  count INTEGER NOT NULL,
  min REAL NOT NULL,
  max REAL NOT NULL,
  sum REAL NOT NULL,
  PRIMARY KEY (name, bucket, app)
) STRICT;
CREATE INDEX metric_rollups_${resolution}_bucket ON metric_rollups_${resolution} (bucket);
`;
}

export const SQLITE_MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    sql: `
CREATE TABLE events (
  id TEXT NOT NULL,
  ts INTEGER NOT NULL,
  type TEXT NOT NULL,
  app TEXT NOT NULL,
  name TEXT NOT NULL,
  version TEXT,
  env TEXT,
  message TEXT,
  error_message TEXT,
  error_kind TEXT,
  error_stack TEXT,
  attributes TEXT NOT NULL,
  PRIMARY KEY (ts, id)
) STRICT;
CREATE INDEX events_app_ts_id ON events (app, ts DESC, id DESC);

CREATE TABLE metric_samples (
  id TEXT NOT NULL,
  ts INTEGER NOT NULL,
  app TEXT NOT NULL,
  name TEXT NOT NULL,
  version TEXT,
  env TEXT,
  value REAL,
  count INTEGER,
  min REAL,
  max REAL,
  sum REAL,
  message TEXT,
  attributes TEXT NOT NULL,
  PRIMARY KEY (ts, id)
) STRICT;
CREATE INDEX metric_samples_name_ts ON metric_samples (name, ts);
`,
  },
  {
    // The scheduler's run history and the metric rollups, as in postgres/migrations/002_scheduler.ts.
    version: 2,
    sql: `
CREATE TABLE scheduler_runs (
  job TEXT NOT NULL,
  slot_ms INTEGER NOT NULL,
  interval_ms INTEGER NOT NULL,
  instance TEXT NOT NULL,
  started_ms INTEGER NOT NULL,
  finished_ms INTEGER,
  duration_ms REAL,
  rows INTEGER,
  error TEXT,
  claimed_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (job, slot_ms)
) STRICT;
CREATE INDEX scheduler_runs_job_started ON scheduler_runs (job, started_ms);

${rollupTable('1m')}
${rollupTable('1h')}
CREATE TABLE rollup_watermarks (
  rollup TEXT PRIMARY KEY,
  watermark_ms INTEGER NOT NULL
) STRICT;
`,
  },
  {
    // The rollup invalidation log, as in postgres/migrations/003_rollup_invalidations.ts. SQLite
    // has one writer at a time, so a key costs no waiting: one row per bucket until folded.
    version: 3,
    sql: `
CREATE TABLE metric_rollup_invalidations (
  name TEXT NOT NULL,
  app TEXT NOT NULL,
  bucket INTEGER NOT NULL,
  PRIMARY KEY (name, app, bucket)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER metric_samples_log_rollup_invalidations AFTER INSERT ON metric_samples
BEGIN
  INSERT OR IGNORE INTO metric_rollup_invalidations (name, app, bucket)
  VALUES (NEW.name, NEW.app, NEW.ts - NEW.ts % 60000);
END;

INSERT OR IGNORE INTO metric_rollup_invalidations (name, app, bucket)
SELECT DISTINCT name, app, ts - ts % 60000 FROM metric_samples
 WHERE ts >= coalesce((SELECT watermark_ms - 3600000 FROM rollup_watermarks WHERE rollup = 'metric_rollups'), 0);
`,
  },
  {
    // The read API's indexes, as in postgres/migrations/004_read_indexes.ts.
    version: 4,
    sql: `
CREATE INDEX events_name_ts_id ON events (name, ts DESC, id DESC);
CREATE INDEX events_type_ts_id ON events (type, ts DESC, id DESC);
`,
  },
  {
    // The loss map, as in postgres/migrations/005_outcomes.ts; `stored` is counted by the writer
    // (write.ts) in the transaction of its rows.
    version: 5,
    sql: `
CREATE TABLE event_outcomes (
  app TEXT NOT NULL,
  minute INTEGER NOT NULL,
  type TEXT NOT NULL,
  outcome TEXT NOT NULL,
  reason TEXT NOT NULL,
  origin TEXT NOT NULL,
  count INTEGER NOT NULL
) STRICT;
CREATE INDEX event_outcomes_app_minute ON event_outcomes (app, minute);
CREATE INDEX event_outcomes_minute ON event_outcomes (minute);

CREATE TABLE client_reports (
  id TEXT PRIMARY KEY,
  minute INTEGER NOT NULL
) STRICT;
CREATE INDEX client_reports_minute ON client_reports (minute);
`,
  },
  {
    // Compaction of the loss map, as in postgres/migrations/007_outcome_compaction.ts.
    version: 6,
    sql: `
ALTER TABLE event_outcomes ADD COLUMN folded INTEGER NOT NULL DEFAULT 0;
CREATE INDEX event_outcomes_unfolded ON event_outcomes (minute) WHERE folded = 0;
`,
  },
  {
    // The lists' indexes by app, as in postgres/migrations/010_rollup_app_indexes.ts.
    version: 7,
    sql: `
CREATE INDEX metric_rollups_1h_app_bucket ON metric_rollups_1h (app, bucket);
CREATE INDEX metric_rollups_1h_app_name_bucket ON metric_rollups_1h (app, name, bucket);
CREATE INDEX metric_rollups_1m_app_bucket ON metric_rollups_1m (app, bucket);
`,
  },
  {
    // Paths for the jobs' slices, so each reads only its own rows whatever the number of apps:
    // the folds read a claimed (name, app, bucket)'s samples and 1m rows by their key
    // (fold-sources.ts), not every app's rows of that name; the loss-map compaction takes a
    // minute's unfolded rows by app (compact-outcomes.ts). The samples' index costs each write
    // one more key (docs/performance-history.md, "SQLite: jobs in slices").
    version: 8,
    sql: `
CREATE INDEX metric_samples_app_name_ts ON metric_samples (app, name, ts);
CREATE INDEX metric_rollups_1m_app_name_bucket ON metric_rollups_1m (app, name, bucket);
DROP INDEX event_outcomes_unfolded;
CREATE INDEX event_outcomes_unfolded ON event_outcomes (minute, app) WHERE folded = 0;
`,
  },
];
