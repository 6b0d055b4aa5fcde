import type pg from 'pg';
import type { OutcomeBatch, OutcomeCount, OutcomeQuery, OutcomeRow } from '../../loss-map/outcome';
import { minuteOf } from '../../loss-map/outcome';
import { mapInSlices } from '../layout/map-in-slices';
import { READ_PAGE_ROWS } from '../layout/read-runner';
import type { RowSink } from '../port';
import type { ReadPages } from './read-cursor';
import { outcomeRowOf, type OutcomeSumRow } from '../layout/outcome-rows';
import { inTransaction } from './pool';
import { UNMERGED_COPY_CORRECTIONS } from './unmerged-copies';

const INSERT_COUNTS = `
INSERT INTO event_outcomes (app, minute, type, outcome, reason, origin, count)
SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[])`;

/** The reports of ids not stored before: the ids inserted, then only their counts. */
const INSERT_REPORTS = `
WITH fresh AS (
  INSERT INTO client_reports (id, minute) SELECT unnest($1::uuid[]), $2::bigint
  ON CONFLICT DO NOTHING RETURNING id
)
INSERT INTO event_outcomes (app, minute, type, outcome, reason, origin, count)
SELECT r.app, r.minute, r.type, r.outcome, r.reason, r.origin, r.count
  FROM unnest($3::uuid[], $4::text[], $5::bigint[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bigint[])
       AS r(id, app, minute, type, outcome, reason, origin, count)
 WHERE r.id IN (SELECT id FROM fresh)`;

function columns(counts: readonly OutcomeCount[]): unknown[][] {
  return [
    counts.map((c) => c.app),
    counts.map((c) => c.minute),
    counts.map((c) => c.type),
    counts.map((c) => c.outcome),
    counts.map((c) => c.reason),
    counts.map((c) => c.origin),
    counts.map((c) => c.count),
  ];
}

/** Appends `counts` on the caller's transaction. */
export async function insertCounts(client: pg.ClientBase, counts: readonly OutcomeCount[]): Promise<void> {
  if (counts.length > 0) await client.query(INSERT_COUNTS, columns(counts));
}

/** One transaction: the counts, and each report's counts unless its id was stored before. */
export async function writeOutcomes(client: pg.ClientBase, batch: OutcomeBatch): Promise<void> {
  if (batch.counts.length === 0 && batch.reports.length === 0) return;
  await inTransaction(client, async () => {
    if (batch.counts.length > 0) await client.query(INSERT_COUNTS, columns(batch.counts));
    if (batch.reports.length > 0) {
      const ids: string[] = [];
      const counts: OutcomeCount[] = [];
      for (const r of batch.reports) {
        for (const c of r.counts) {
          ids.push(r.id);
          counts.push(c);
        }
      }
      const reportIds = batch.reports.map((r) => r.id);
      await client.query(INSERT_REPORTS, [reportIds, minuteOf(batch.now), ids, ...columns(counts)]);
    }
  });
}

/** The app's counts in [`$2`, `$3`) with the corrections the merge job has yet to write. */
const COUNTS = `
SELECT minute, type, outcome, reason, origin, count
  FROM event_outcomes
 WHERE app = $1 AND minute >= $2 AND minute < $3
UNION ALL
${UNMERGED_COPY_CORRECTIONS}`;

const QUERY = `
SELECT minute, type, outcome, reason, origin, sum(count)::text AS count
  FROM (${COUNTS}) c
 GROUP BY minute, type, outcome, reason, origin
 ORDER BY minute, type, outcome, reason, origin`;

/** `QUERY` summed over types too (`OutcomeQuery.byType` false). */
const QUERY_ALL_TYPES = `
SELECT minute, '' AS type, outcome, reason, origin, sum(count)::text AS count
  FROM (${COUNTS}) c
 GROUP BY minute, outcome, reason, origin
 ORDER BY minute, outcome, reason, origin`;

/**
 * The app's counts in the window, summed per (minute, type, outcome, reason, origin) (without
 * type: `OutcomeQuery.byType`); with
 * `onRows` handed to it in pages of the read's cursor (`Storage.queryOutcomes`), a week of minutes
 * being tens of thousands of rows.
 */
export async function queryOutcomes(
  query: (sql: string, values: unknown[]) => Promise<{ rows: OutcomeSumRow[] }>,
  pages: ReadPages,
  q: OutcomeQuery,
  onRows?: RowSink<OutcomeRow>,
): Promise<OutcomeRow[]> {
  const sql = q.byType === false ? QUERY_ALL_TYPES : QUERY;
  if (onRows === undefined) return mapInSlices((await query(sql, [q.app, q.from, q.to])).rows, outcomeRowOf);
  await pages<OutcomeSumRow & pg.QueryResultRow>(sql, [q.app, q.from, q.to], READ_PAGE_ROWS, (rows) =>
    onRows(rows.map(outcomeRowOf)),
  );
  return [];
}
