/**
 * Compaction of the loss map (src/scheduler/jobs/compact-outcomes.ts). `folded` marks the rows
 * the job wrote: one per (app, minute, type, outcome, reason, origin), holding the sum of the rows
 * it replaced. Every writer inserts without naming the column, so its rows are `false` (rows of an
 * older collector during a rolling upgrade too), and the partial index lists exactly those rows:
 * the job finds the minutes still to fold, however late a row of an old minute was written,
 * without scanning the folded rows of the whole retention. It replaces 005's index on `minute`,
 * so the rows every write transaction adds still pay two index entries: the purge finds unfolded
 * rows through it and the folded ones (one per key and minute) by a scan (postgres/purge.ts).
 * Adding a column with a constant default rewrites nothing; building the index reads the table
 * once (writers of the loss map wait for it, inside this migration's transaction).
 */
export const sql = `
ALTER TABLE event_outcomes ADD COLUMN folded boolean NOT NULL DEFAULT false;
CREATE INDEX event_outcomes_unfolded ON event_outcomes (minute) WHERE NOT folded;
DROP INDEX event_outcomes_minute;
`;
