import { columnList, METRIC_SAMPLES } from '../layout/columns';
import type { StoredGroup } from '../../loss-map/outcome';
import { BLOCK_COLUMNS, BLOCK_SAMPLE_ARRAYS } from './metric-block-columns';

/*
 * Inserts that also write what stored-records.ts writes for the COPY path (the invalidation logs of
 * rollups and error groups, the stored counts), in the same statement,
 * from the rows really inserted: a duplicate skipped by a conflict is neither logged nor counted.
 * The statement's one result row's `inserted` is the number of rows (samples) inserted, and
 * `stored_by` what went in per (app, type, minute) as JSON `[[app, key, minute, n], …]` (the key is
 * a sample's name): what the writer needs to count the rest as duplicates (`storedGroupsOf`).
 * Data-modifying CTEs run whether or not the final SELECT reads them, in the statement's
 * transaction.
 */

/**
 * The records of an `inserted` CTE (columns app, key, ts; the key is a sample's name, an event's
 * type).
 */
function recordsOfInserted(metric: boolean, countStored: boolean): string {
  const logged = metric
    ? `,
  logged AS (
    INSERT INTO metric_rollup_invalidations (app, name, bucket) SELECT app, key, minute FROM groups)`
    : `,
  logged AS (
    INSERT INTO error_group_invalidations (app, minute) SELECT app, minute FROM groups WHERE key = 'error')`;
  const counted = countStored
    ? `,
  counted AS (
    INSERT INTO event_outcomes (app, type, minute, outcome, reason, origin, count)
    SELECT app, ${metric ? `'metric'` : 'key'}, minute, 'stored', '', '', sum(n) FROM groups
     GROUP BY 1, 2, 3)`
    : '';
  return `,
  groups AS (SELECT app, key, ts - ts % 60000 AS minute, count(*) AS n FROM inserted GROUP BY 1, 2, 3)${logged}${counted}
SELECT (SELECT count(*)::int FROM inserted) AS inserted,
  (SELECT coalesce(json_agg(json_build_array(app, key, minute, n)), '[]'::json) FROM groups) AS stored_by`;
}

/** `insert` (an `INSERT INTO events … ON CONFLICT DO NOTHING`, without RETURNING), recorded. */
export function recordedEventInsert(insert: string, countStored: boolean): string {
  return `WITH inserted AS (
    ${insert}
    RETURNING app, type AS key, ts)${recordsOfInserted(false, countStored)}`;
}

const SAMPLE_COLUMNS = columnList(METRIC_SAMPLES);
/** `metric_blocks`' arrays, each aggregated in the samples' (ts, id) order. */
const SAMPLE_ARRAYS = BLOCK_SAMPLE_ARRAYS.map((c) => `array_agg(${c} ORDER BY ts, id)`).join(', ');

/**
 * Metric samples from `source` (a relation or set-returning expression with `METRIC_SAMPLES`'
 * columns), written as one block per (app, name, minute) and recorded. Every sample is written
 * (migration 012: no key refuses a resent one; reads merge it away and the rewrite job removes it,
 * correcting the stored count; metric-block-merge.ts).
 */
export function recordedSamplesInsert(source: string, countStored: boolean): string {
  return `WITH inserted AS MATERIALIZED (SELECT ${SAMPLE_COLUMNS}, name AS key FROM ${source}),
  blocks AS (
    INSERT INTO metric_blocks (${BLOCK_COLUMNS})
    SELECT ts - ts % 60000, app, name, ${SAMPLE_ARRAYS} FROM inserted GROUP BY ts - ts % 60000, app, name)${recordsOfInserted(true, countStored)}`;
}

/** The result row of a recorded insert. */
export interface RecordedInsertResult {
  readonly inserted: number;
  /** `[app, key, minute, n]` per group of the rows inserted (bigints come as numbers in JSON). */
  readonly stored_by: ReadonlyArray<readonly [string, string, number, number]>;
}

/** `stored_by` as `WriteResult.storedBy` groups (a sample's name becomes the type `metric`). */
export function storedGroupsOf(r: RecordedInsertResult | undefined, metric: boolean): StoredGroup[] {
  return (r?.stored_by ?? []).map(([app, key, minute, count]) => ({
    app,
    type: metric ? 'metric' : key,
    minute: Number(minute),
    count: Number(count),
  }));
}
