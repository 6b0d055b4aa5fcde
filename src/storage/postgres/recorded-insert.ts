/**
 * `insert` (an `INSERT INTO metric_samples|events … ON CONFLICT DO NOTHING`, without RETURNING)
 * as one statement that also writes what stored-records.ts writes for the COPY path, from the rows
 * it really inserted: a duplicate skipped by the conflict is neither logged nor counted. Its one
 * result row's `inserted` is the number of rows inserted. Data-modifying CTEs run whether or not
 * the final SELECT reads them, in the statement's transaction.
 */
export function recordedInsert(
  table: 'metric_samples' | 'events',
  insert: string,
  countStored: boolean,
): string {
  const metric = table === 'metric_samples';
  // Metric samples group by name (the log's key) and count as type 'metric'; events by type.
  const key = metric ? 'name' : 'type';
  const logged = metric
    ? `,
  logged AS (
    INSERT INTO metric_rollup_invalidations (app, name, bucket) SELECT app, key, minute FROM groups)`
    : '';
  const counted = countStored
    ? `,
  counted AS (
    INSERT INTO event_outcomes (app, type, minute, outcome, reason, origin, count)
    SELECT app, ${metric ? `'metric'` : 'key'}, minute, 'stored', '', '', sum(n) FROM groups
     GROUP BY 1, 2, 3)`
    : '';
  return `WITH inserted AS (
    ${insert}
    RETURNING app, ${key} AS key, ts),
  groups AS (SELECT app, key, ts - ts % 60000 AS minute, count(*) AS n FROM inserted GROUP BY 1, 2, 3)${logged}${counted}
SELECT count(*)::int AS inserted FROM inserted`;
}
