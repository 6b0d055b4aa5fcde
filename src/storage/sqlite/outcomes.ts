import type Database from 'better-sqlite3';
import type { OutcomeBatch, OutcomeCount, OutcomeQuery, OutcomeRow } from '../../loss-map/outcome';
import { minuteOf } from '../../loss-map/outcome';
import { outcomeRowOf, type OutcomeSumRow } from '../layout/outcome-rows';

type Prepare = (sql: string) => Database.Statement;

const INSERT_COUNT = `INSERT INTO event_outcomes (app, minute, type, outcome, reason, origin, count)
VALUES (@app, @minute, @type, @outcome, @reason, @origin, @count)`;

/** Appends counts (inside the caller's transaction). */
export function insertCounts(prepare: Prepare, counts: Iterable<OutcomeCount>): void {
  const stmt = prepare(INSERT_COUNT);
  for (const c of counts) stmt.run(c);
}

/** Returns a function writing one batch in one transaction (see `Storage.writeOutcomes`). */
export function outcomeWriter(db: Database.Database, prepare: Prepare): (batch: OutcomeBatch) => void {
  const write = db.transaction((batch: OutcomeBatch) => {
    insertCounts(prepare, batch.counts);
    const claim = prepare('INSERT OR IGNORE INTO client_reports (id, minute) VALUES (?, ?)');
    const minute = minuteOf(batch.now);
    for (const report of batch.reports) {
      if (claim.run(report.id, minute).changes === 1) insertCounts(prepare, report.counts);
    }
  });
  return (batch) => write.immediate(batch);
}

const QUERY = `
SELECT minute, type, outcome, reason, origin, sum(count) AS count
  FROM event_outcomes
 WHERE app = ? AND minute >= ? AND minute < ?
 GROUP BY minute, type, outcome, reason, origin
 ORDER BY minute, type, outcome, reason, origin`;

/** `QUERY` summed over types too (`OutcomeQuery.byType` false). */
const QUERY_ALL_TYPES = `
SELECT minute, '' AS type, outcome, reason, origin, sum(count) AS count
  FROM event_outcomes
 WHERE app = ? AND minute >= ? AND minute < ?
 GROUP BY minute, outcome, reason, origin
 ORDER BY minute, outcome, reason, origin`;

export function queryOutcomes(prepare: Prepare, q: OutcomeQuery): OutcomeRow[] {
  const sql = q.byType === false ? QUERY_ALL_TYPES : QUERY;
  return (prepare(sql).all(q.app, q.from, q.to) as OutcomeSumRow[]).map(outcomeRowOf);
}
