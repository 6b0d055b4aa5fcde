import type Database from 'better-sqlite3';
import type { OutcomeCompaction } from '../maintenance';

type Prepare = (sql: string) => Database.Statement;

const OLDEST_UNFOLDED = `
SELECT min(minute) AS minute FROM event_outcomes WHERE folded = 0 AND minute >= ? AND minute < ?`;

/** The keys of the minute with a row not folded yet: only their rows are rewritten. */
const FRESH_KEYS = `
SELECT app, type, outcome, reason, origin FROM event_outcomes WHERE folded = 0 AND minute = @minute`;

const SUMS = `
SELECT app, type, outcome, reason, origin, sum(count) AS count FROM event_outcomes
 WHERE minute = @minute AND (app, type, outcome, reason, origin) IN (${FRESH_KEYS})
 GROUP BY app, type, outcome, reason, origin`;

const REMOVE = `
DELETE FROM event_outcomes
 WHERE minute = @minute AND (app, type, outcome, reason, origin) IN (${FRESH_KEYS})`;

const INSERT_FOLDED = `
INSERT INTO event_outcomes (app, minute, type, outcome, reason, origin, count, folded)
VALUES (@app, @minute, @type, @outcome, @reason, @origin, @count, 1)`;

interface Sum {
  app: string;
  type: string;
  outcome: string;
  reason: string;
  origin: string;
  count: number;
}

/**
 * `MaintenanceSession.compactOutcomeMinute` inside the caller's `BEGIN IMMEDIATE` transaction:
 * nothing else writes the file meanwhile, so the sums read, the rows removed and the rows written
 * are of the same rows (postgres/compact-outcomes.ts does it in one statement).
 */
export function compactOutcomeMinute(prepare: Prepare, fromMs: number, beforeMs: number): OutcomeCompaction {
  const target = prepare(OLDEST_UNFOLDED).get(fromMs, beforeMs) as { minute: number | null } | undefined;
  const minute = target?.minute ?? null;
  if (minute === null) return { minute: null, folded: 0, written: 0 };
  const sums = prepare(SUMS).all({ minute }) as Sum[];
  const folded = prepare(REMOVE).run({ minute }).changes;
  const insert = prepare(INSERT_FOLDED);
  for (const s of sums) insert.run({ ...s, minute });
  return { minute, folded, written: sums.length };
}
