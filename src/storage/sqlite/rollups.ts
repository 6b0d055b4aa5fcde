import type Database from 'better-sqlite3';
import { foldSources } from '../layout/rollup-folds';
import { ROLLUP_TABLE } from '../layout/rollups';
import type { FoldResult } from '../maintenance';

type Prepare = (sql: string) => Database.Statement;

/*
 * The invalidation-log fold, as the PostgreSQL adapter does it (postgres/rollups.ts): the buckets
 * the log names are recomputed whole from their source and replace what is stored.
 */

/** The buckets one fold takes from the log (a connection-local table). */
const TAKEN = 'temp.sluice_rollup_buckets';

function upsert(table: string, select: string): string {
  return `INSERT INTO ${table} (name, bucket, app, count, min, max, sum)
    ${select}
    ON CONFLICT (name, bucket, app) DO UPDATE
       SET count = excluded.count, min = excluded.min, max = excluded.max, sum = excluded.sum
     WHERE count IS NOT excluded.count OR min IS NOT excluded.min
        OR max IS NOT excluded.max OR sum IS NOT excluded.sum`;
}

const SOURCES = foldSources(TAKEN, '@rawBefore');
const FOLD_1M = upsert(ROLLUP_TABLE['1m'], SOURCES.minutes);
const FOLD_1H_FROM_1M = upsert(ROLLUP_TABLE['1h'], SOURCES.hoursFrom1m);
const FOLD_1H_FROM_RAW = upsert(ROLLUP_TABLE['1h'], SOURCES.hoursFromRaw);

/**
 * Takes up to `maxEntries` entries of the invalidation log and refolds their buckets (see
 * `MaintenanceSession.foldInvalidatedBuckets`). Call it inside one transaction: the entries are
 * deleted with the fold, or not at all.
 */
export function foldInvalidatedBuckets(
  db: Database.Database,
  prepare: Prepare,
  maxEntries: number,
  rawSourceBeforeMs: number,
): FoldResult {
  db.exec(`CREATE TEMP TABLE IF NOT EXISTS sluice_rollup_buckets (name TEXT, app TEXT, bucket INTEGER)`);
  prepare(`DELETE FROM ${TAKEN}`).run();
  const entries = prepare(
    `INSERT INTO ${TAKEN} SELECT name, app, bucket FROM metric_rollup_invalidations LIMIT @maxEntries`,
  ).run({ maxEntries }).changes;
  if (entries === 0) return { entries: 0, buckets: 0, rows1m: 0, rows1h: 0 };
  prepare(
    `DELETE FROM metric_rollup_invalidations WHERE (name, app, bucket) IN (SELECT name, app, bucket FROM ${TAKEN})`,
  ).run();
  const rows1m = prepare(FOLD_1M).run().changes;
  const rawBefore = Math.trunc(rawSourceBeforeMs);
  const rows1h =
    prepare(FOLD_1H_FROM_1M).run({ rawBefore }).changes +
    prepare(FOLD_1H_FROM_RAW).run({ rawBefore }).changes;
  return { entries, buckets: entries, rows1m, rows1h };
}
