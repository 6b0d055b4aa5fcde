import type Database from 'better-sqlite3';
import { IsolatingFold, type BucketRange } from '../fold-isolation';
import { SUM_SCALE } from '../layout/rollup-folds';
import { sqliteFoldSources } from './fold-sources';
import { ROLLUP_TABLE } from '../layout/rollups';
import type { FoldResult } from '../maintenance';

type Prepare = (sql: string) => Database.Statement;

/*
 * The invalidation-log fold, as the PostgreSQL adapter does it (postgres/rollups.ts): the buckets
 * the log names are recomputed whole from their source and replace what is stored.
 */

/** The buckets one fold takes from the log (a connection-local table), numbered from 0 (`i`). */
const CLAIMED = 'temp.sluice_rollup_buckets';

function upsert(table: string, select: string): string {
  return `INSERT INTO ${table} (name, bucket, app, count, min, max, sum)
    ${select}
    ON CONFLICT (name, bucket, app) DO UPDATE
       SET count = excluded.count, min = excluded.min, max = excluded.max, sum = excluded.sum
     WHERE count IS NOT excluded.count OR min IS NOT excluded.min
        OR max IS NOT excluded.max OR sum IS NOT excluded.sum`;
}

/** SQLite's multiplication overflows to ±Infinity by itself, and a NaN result is already NULL. */
const DIALECT = {
  from: '@from',
  to: '@to',
  rawBefore: '@rawBefore',
  unscale: (scaled: string) => `${scaled} * ${SUM_SCALE}`,
};
const SOURCES = sqliteFoldSources(CLAIMED, DIALECT);
const FOLD_1M = upsert(ROLLUP_TABLE['1m'], SOURCES.minutes);
const FOLD_1H_FROM_1M = upsert(ROLLUP_TABLE['1h'], SOURCES.hoursFrom1m);
const FOLD_1H_FROM_RAW = upsert(ROLLUP_TABLE['1h'], SOURCES.hoursFromRaw);

/**
 * Takes up to `maxEntries` entries of the invalidation log and refolds their buckets (see
 * `MaintenanceSession.foldInvalidatedBuckets`), each range under a savepoint so that buckets whose
 * rows cannot be folded are skipped alone (fold-isolation.ts). Call it inside one transaction:
 * the entries are deleted with the fold, or not at all.
 */
export function foldInvalidatedBuckets(
  db: Database.Database,
  prepare: Prepare,
  maxEntries: number,
  rawSourceBeforeMs: number,
): FoldResult {
  db.exec(
    `CREATE TEMP TABLE IF NOT EXISTS sluice_rollup_buckets (i INTEGER, name TEXT, app TEXT, bucket INTEGER)`,
  );
  prepare(`DELETE FROM ${CLAIMED}`).run();
  const entries = prepare(
    `INSERT INTO ${CLAIMED} SELECT row_number() OVER () - 1, name, app, bucket
       FROM (SELECT name, app, bucket FROM metric_rollup_invalidations LIMIT @maxEntries)`,
  ).run({ maxEntries }).changes;
  if (entries === 0) return { entries: 0, buckets: 0, rows1m: 0, rows1h: 0, skipped: [] };
  prepare(
    `DELETE FROM metric_rollup_invalidations WHERE (name, app, bucket) IN (SELECT name, app, bucket FROM ${CLAIMED})`,
  ).run();
  const rawBefore = Math.trunc(rawSourceBeforeMs);
  // Nested in the caller's transaction: a savepoint, rolled back when it throws.
  const foldRange = db.transaction(({ from, to }: BucketRange) => ({
    rows1m: prepare(FOLD_1M).run({ from, to }).changes,
    rows1h:
      prepare(FOLD_1H_FROM_1M).run({ from, to, rawBefore }).changes +
      prepare(FOLD_1H_FROM_RAW).run({ from, to, rawBefore }).changes,
  }));
  const fold = new IsolatingFold(entries);
  for (let range = fold.next(); range !== null; range = fold.next()) {
    try {
      fold.folded(foldRange(range));
    } catch (err) {
      fold.failed(err);
    }
  }
  const bucketAt = prepare(`SELECT name, app, bucket FROM ${CLAIMED} WHERE i = ?`);
  const skipped = fold.skipped.map(({ index, error }) => ({
    ...(bucketAt.get(index) as { name: string; app: string; bucket: number }),
    error,
  }));
  return { entries, buckets: entries, rows1m: fold.rows1m, rows1h: fold.rows1h, skipped };
}
