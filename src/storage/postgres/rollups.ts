import type pg from 'pg';
import { foldSources } from '../layout/rollup-folds';
import { ROLLUP_TABLE } from '../layout/rollups';
import type { FoldResult } from '../maintenance';

/*
 * Rollup SQL for the downsample job (run on the job's transaction client); the read side is
 * query-metrics.ts.
 * The job folds exactly the buckets the invalidation log names (see
 * migrations/003_rollup_invalidations.ts): each is recomputed whole from its source and replaces
 * what is stored, so folding a bucket twice changes nothing and a duplicate, stored once, is
 * counted once.
 */

/** The buckets one fold takes from the log: distinct, emptied at every commit of the session. */
const TAKEN = 'sluice_rollup_buckets';

/** Rows whose figures are unchanged are not rewritten: no dead tuples, and the count says what changed. */
function upsert(table: string, select: string): string {
  return `INSERT INTO ${table} AS r (name, bucket, app, count, min, max, sum)
    ${select}
    ON CONFLICT (name, bucket, app) DO UPDATE
       SET count = EXCLUDED.count, min = EXCLUDED.min, max = EXCLUDED.max, sum = EXCLUDED.sum
     WHERE (r.count, r.min, r.max, r.sum) IS DISTINCT FROM (EXCLUDED.count, EXCLUDED.min, EXCLUDED.max, EXCLUDED.sum)`;
}

const SOURCES = foldSources(TAKEN, '$1');
const FOLD_1M = upsert(ROLLUP_TABLE['1m'], SOURCES.minutes);
const FOLD_1H_FROM_1M = upsert(ROLLUP_TABLE['1h'], SOURCES.hoursFrom1m);
const FOLD_1H_FROM_RAW = upsert(ROLLUP_TABLE['1h'], SOURCES.hoursFromRaw);

/**
 * Takes up to `maxEntries` rows of the invalidation log (deleted in this transaction) and
 * recomputes their 1m buckets from raw samples, then the 1h buckets holding them: from 1m rows
 * for hours starting at or after `rawSourceBeforeMs`, from raw samples before it (their 1m rows
 * may be purged already). Resolves to the log rows taken and the rollup rows inserted or changed.
 */
export async function foldInvalidatedBuckets(
  client: pg.ClientBase,
  maxEntries: number,
  rawSourceBeforeMs: number,
): Promise<FoldResult> {
  await client.query(
    `CREATE TEMP TABLE IF NOT EXISTS ${TAKEN} (name text, app text, bucket bigint) ON COMMIT DELETE ROWS`,
  );
  await client.query(`TRUNCATE ${TAKEN}`);
  const { rows } = await client.query<{ entries: string; buckets: string }>(
    `WITH taken AS (
       DELETE FROM metric_rollup_invalidations
        WHERE ctid = ANY (ARRAY(SELECT ctid FROM metric_rollup_invalidations LIMIT $1))
       RETURNING name, app, bucket),
     kept AS (INSERT INTO ${TAKEN} SELECT DISTINCT name, app, bucket FROM taken RETURNING 1)
     SELECT (SELECT count(*) FROM taken) AS entries, (SELECT count(*) FROM kept) AS buckets`,
    [maxEntries],
  );
  const entries = Number(rows[0]?.entries ?? 0);
  const buckets = Number(rows[0]?.buckets ?? 0);
  if (buckets === 0) return { entries, buckets, rows1m: 0, rows1h: 0 };
  // The planner knows nothing of a fresh temporary table; a few rows or many change the join.
  await client.query(`ANALYZE ${TAKEN}`);
  const rows1m = (await client.query(FOLD_1M)).rowCount ?? 0;
  const rows1h =
    ((await client.query(FOLD_1H_FROM_1M, [rawSourceBeforeMs])).rowCount ?? 0) +
    ((await client.query(FOLD_1H_FROM_RAW, [rawSourceBeforeMs])).rowCount ?? 0);
  return { entries, buckets, rows1m, rows1h };
}
