/**
 * Text search (`GET /v1/events?text=`) through a trigram index: `pg_trgm`, shipped with
 * PostgreSQL's contrib modules and trusted since PostgreSQL 13 (a role with CREATE on the database
 * may create it), and one GIN index over both texts a filter matches, `message` and
 * `error_message`, so `message ILIKE p OR error_message ILIKE p` is a BitmapOr of two reads of it
 * (query-events.ts). Without the extension the migration stops with an error saying what to
 * install; there is no fall back, since a text filter would read a window's rows one by one.
 * Write cost: every `events` row pays its texts' trigrams (docs/ARCHITECTURE.md, "Storage and
 * jobs": about 7 times the server's CPU per row of `events` on messages that carry a hash).
 * The build holds a SHARE lock on `events` while it runs over existing rows (its writes wait).
 */
export const sql = `
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') THEN
    RAISE EXCEPTION 'PostgreSQL''s pg_trgm extension is not available on this server'
      USING HINT = 'Install PostgreSQL''s contrib modules (Debian: postgresql-contrib; it ships with the official images), or run CREATE EXTENSION pg_trgm as a superuser, then start the collector again.';
  END IF;
END $$;
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX events_text_trgm ON events USING gin (message gin_trgm_ops, error_message gin_trgm_ops);
`;
