/**
 * The writer records what it stored (src/storage/postgres/stored-records.ts, recorded-insert.ts):
 * the rollup invalidation log's (app, name, minute) and the loss map's stored counts, in the same
 * transaction as the rows, from the rows it really inserted. The statement-level triggers of 005
 * and 006 did the same from a transition table, which PostgreSQL fills with a copy of every
 * inserted row: an eighth to a fifth of the database's CPU per metric point in the bench
 * (docs/performance-history.md, "PostgreSQL's CPU per metric point"). An older collector writing during a
 * rolling upgrade records nothing once this is applied (docs/operations.md, "Upgrading across
 * migration 8").
 */
export const sql = `
DROP TRIGGER metric_samples_log_stored ON metric_samples;
DROP FUNCTION sluice_log_stored_samples();
DROP TRIGGER events_count_stored ON events;
DROP FUNCTION sluice_count_stored_events();
`;
