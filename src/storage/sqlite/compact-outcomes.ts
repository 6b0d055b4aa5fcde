import type Database from 'better-sqlite3';

type Prepare = (sql: string) => Database.Statement;

const OLDEST_UNFOLDED = `
SELECT min(minute) AS minute FROM event_outcomes WHERE folded = 0 AND minute >= ? AND minute < ?`;

/** The first and last of the next `@apps` apps (after `@after`) with a row of the minute not folded yet. */
function sliceOf(after: string): string {
  return `
SELECT min(app) AS first, max(app) AS last, count(*) AS apps FROM (
  SELECT DISTINCT app FROM event_outcomes
   WHERE folded = 0 AND minute = @minute ${after} ORDER BY app LIMIT @apps)`;
}
const FIRST_SLICE = sliceOf('');
const NEXT_SLICE = sliceOf('AND app > @after');

/** The apps of the slice. */
const IN_SLICE = 'minute = @minute AND app >= @first AND app <= @last';

/** The keys of the slice with a row not folded yet: only their rows are rewritten. */
const FRESH_KEYS = `
SELECT app, type, outcome, reason, origin FROM event_outcomes WHERE folded = 0 AND ${IN_SLICE}`;

const SUMS = `
SELECT app, type, outcome, reason, origin, sum(count) AS count FROM event_outcomes
 WHERE ${IN_SLICE} AND (app, type, outcome, reason, origin) IN (${FRESH_KEYS})
 GROUP BY app, type, outcome, reason, origin`;

const REMOVE = `
DELETE FROM event_outcomes
 WHERE ${IN_SLICE} AND (app, type, outcome, reason, origin) IN (${FRESH_KEYS})`;

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

/** What one slice of a minute's compaction did. */
export interface OutcomeSliceCompaction {
  /** Rows removed (each counted in exactly one written row). */
  readonly folded: number;
  /** Folded rows written: one per key. */
  readonly written: number;
  /** The slice's last app, where the next slice starts after; null: the minute had none left. */
  readonly lastApp: string | null;
  /** Apps in the slice; fewer than asked: the minute has no more. */
  readonly apps: number;
}

/** The oldest minute in [fromMs, beforeMs) holding a row not folded yet; null when none. */
export function oldestUnfoldedMinute(prepare: Prepare, fromMs: number, beforeMs: number): number | null {
  const row = prepare(OLDEST_UNFOLDED).get(fromMs, beforeMs) as { minute: number | null } | undefined;
  return row?.minute ?? null;
}

/**
 * Folds the keys of `minute` of the next `maxApps` apps after `afterApp` (from the first when
 * null) that have a row not folded yet, inside the caller's `BEGIN IMMEDIATE` transaction: nothing
 * else writes the file meanwhile, so the sums read, the rows removed and the rows written are of
 * the same rows, and each key is folded whole in one transaction (postgres/compact-outcomes.ts
 * folds a minute in one statement). Slices keep each transaction short whatever the number of
 * apps: a minute of 50,000 apps in one transaction held the event loop for seconds.
 */
export function compactOutcomeSlice(
  prepare: Prepare,
  minute: number,
  afterApp: string | null,
  maxApps: number,
): OutcomeSliceCompaction {
  const slice = (
    afterApp === null
      ? prepare(FIRST_SLICE).get({ minute, apps: maxApps })
      : prepare(NEXT_SLICE).get({ minute, apps: maxApps, after: afterApp })
  ) as { first: string | null; last: string | null; apps: number };
  if (slice.first === null || slice.last === null) return { folded: 0, written: 0, lastApp: null, apps: 0 };
  const range = { minute, first: slice.first, last: slice.last };
  const sums = prepare(SUMS).all(range) as Sum[];
  const folded = prepare(REMOVE).run(range).changes;
  const insert = prepare(INSERT_FOLDED);
  for (const s of sums) insert.run({ ...s, minute });
  return { folded, written: sums.length, lastApp: slice.last, apps: slice.apps };
}
