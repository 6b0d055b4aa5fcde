/**
 * Two read paths that stay fast at tens of millions of events.
 *
 * Text search (`GET /v1/events?text=`) through a trigram index: `pg_trgm`, shipped with
 * PostgreSQL's contrib modules and trusted since PostgreSQL 13 (a role with CREATE on the database
 * may create it), and one GIN index over both texts a filter matches, `message` and
 * `error_message`, so `message ILIKE p OR error_message ILIKE p` is a BitmapOr of two reads of it
 * (query-events.ts). Without the extension the migration stops with an error saying what to
 * install; there is no fall back, since a text filter would read a window's rows one by one.
 * Write cost: every `events` row pays its texts' trigrams (docs/ARCHITECTURE.md, "Storage and
 * jobs": about 7 times the server's CPU per row of `events` on messages that carry a hash).
 * The build holds a SHARE lock on `events` while it runs over existing rows (its writes wait); an
 * index of that name built beforehand is kept (docs/operations.md, "Upgrading across migration 11").
 *
 * Error groups (`GET /v1/error-groups`) per (app, minute, fingerprint) and per (app, hour,
 * fingerprint) (summed from the minutes, so a week reads 168 rows per group), kept by the
 * downsample job (error-groups.ts) as the rollups are: every write logs the (app, minute) of the errors it
 * stored in `error_group_invalidations` (no key, no index: a writer never waits on another), the
 * job refolds exactly those minutes from raw errors, and `error_group_progress.folded_before` says
 * up to where every minute has been folded once, so a read takes the table before it and raw
 * errors after. Seeded with every minute that holds errors; `folded_before` starts at 0 (all raw,
 * as before) until the job has folded them.
 */
/** One error-group table and the index its purge uses: both widths have the same shape. */
function errorGroupTable(width: '1m' | '1h', bucket: 'minute' | 'hour'): string {
  return `CREATE TABLE error_groups_${width} (
  app text NOT NULL,
  ${bucket} bigint NOT NULL,
  fingerprint text NOT NULL,
  kind text,
  message text NOT NULL,
  count bigint NOT NULL,
  first_ts bigint NOT NULL,
  last_ts bigint NOT NULL,
  last_id uuid NOT NULL,
  PRIMARY KEY (app, ${bucket}, fingerprint)
);
CREATE INDEX error_groups_${width}_${bucket} ON error_groups_${width} (${bucket});
`;
}

export const sql = `
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') THEN
    RAISE EXCEPTION 'PostgreSQL''s pg_trgm extension is not available on this server'
      USING HINT = 'Install PostgreSQL''s contrib modules (Debian: postgresql-contrib; it ships with the official images), or run CREATE EXTENSION pg_trgm as a superuser, then start the collector again.';
  END IF;
END $$;
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX IF NOT EXISTS events_text_trgm ON events USING gin (message gin_trgm_ops, error_message gin_trgm_ops);

${errorGroupTable('1m', 'minute')}
${errorGroupTable('1h', 'hour')}
CREATE TABLE error_group_invalidations (
  app text NOT NULL,
  minute bigint NOT NULL
);
INSERT INTO error_group_invalidations (app, minute)
SELECT DISTINCT app, ts - ts % 60000 FROM events WHERE type = 'error';

CREATE TABLE error_group_progress (
  one boolean PRIMARY KEY DEFAULT true CHECK (one),
  folded_before bigint NOT NULL
);
INSERT INTO error_group_progress (folded_before) VALUES (0);
`;
