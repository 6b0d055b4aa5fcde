import type pg from 'pg';
import type { OutcomeCompaction } from '../maintenance';

/*
 * One statement folds one minute of the loss map (see migrations/007_outcome_compaction.ts). Its
 * DELETE removes only rows its snapshot sees, and RETURNING gives exactly the rows it removed
 * (a row another transaction deleted first, e.g. the purge, is skipped, not returned), so the
 * folded row holds the sum of exactly what is gone: a row committed after the snapshot, late
 * events of an old minute included, is neither removed nor summed, and the next call folds it.
 * Only keys with a row not folded yet are touched, so a late row rewrites its own key's row, not
 * its whole minute.
 */
const FOLD_MINUTE = `
WITH target AS (
  SELECT min(minute) AS minute FROM event_outcomes
   WHERE NOT folded AND minute >= $1::bigint AND minute < $2::bigint
), fresh AS (
  SELECT DISTINCT app, type, outcome, reason, origin FROM event_outcomes
   WHERE NOT folded AND minute = (SELECT minute FROM target)
), gone AS (
  DELETE FROM event_outcomes o
   WHERE o.minute = (SELECT minute FROM target)
     AND (o.app, o.type, o.outcome, o.reason, o.origin) IN (SELECT * FROM fresh)
  RETURNING o.app, o.minute, o.type, o.outcome, o.reason, o.origin, o.count
), written AS (
  INSERT INTO event_outcomes (app, minute, type, outcome, reason, origin, count, folded)
  SELECT app, minute, type, outcome, reason, origin, sum(count), true FROM gone
   GROUP BY app, minute, type, outcome, reason, origin
  RETURNING 1
)
SELECT (SELECT minute FROM target)::text AS minute,
       (SELECT count(*) FROM gone)::int AS folded,
       (SELECT count(*) FROM written)::int AS written`;

/** `MaintenanceSession.compactOutcomeMinute` on the run's transaction client. */
export async function compactOutcomeMinute(
  client: pg.ClientBase,
  fromMs: number,
  beforeMs: number,
): Promise<OutcomeCompaction> {
  const { rows } = await client.query<{ minute: string | null; folded: number; written: number }>(
    FOLD_MINUTE,
    [fromMs, beforeMs],
  );
  const row = rows[0];
  if (row === undefined) throw new Error('outcome compaction returned no row');
  return {
    minute: row.minute === null ? null : Number(row.minute),
    folded: row.folded,
    written: row.written,
  };
}
