import type pg from 'pg';
import { IsolatingFold } from '../fold-isolation';
import { foldSources } from '../layout/rollup-folds';
import { ROLLUP_TABLE } from '../layout/rollups';
import type { FoldResult, SkippedBucket } from '../maintenance';
import { unscaleSum } from './float-sum';
import { rawFoldsPerName } from './raw-folds';

/*
 * Rollup SQL for the downsample job (run on the job's transaction client); the read side is
 * query-metrics.ts.
 * The job folds exactly the buckets the invalidation log names (see
 * migrations/003_rollup_invalidations.ts): each is recomputed whole from its source and replaces
 * what is stored, so folding a bucket twice changes nothing and a duplicate, stored once, is
 * counted once.
 */

/** The buckets one fold takes from the log, numbered from 0 (`i`); emptied at every commit of the session. */
const CLAIMED = 'sluice_rollup_buckets';

/** Rows whose figures are unchanged are not rewritten: no dead tuples, and the count says what changed. */
function upsert(table: string, select: string): string {
  return `INSERT INTO ${table} AS r (name, bucket, app, count, min, max, sum)
    ${select}
    ON CONFLICT (name, bucket, app) DO UPDATE
       SET count = EXCLUDED.count, min = EXCLUDED.min, max = EXCLUDED.max, sum = EXCLUDED.sum
     WHERE (r.count, r.min, r.max, r.sum) IS DISTINCT FROM (EXCLUDED.count, EXCLUDED.min, EXCLUDED.max, EXCLUDED.sum)`;
}

const DIALECT = { from: '$1', to: '$2', rawBefore: '$3', unscale: unscaleSum } as const;
const SOURCES = { ...foldSources(CLAIMED, DIALECT), ...rawFoldsPerName(CLAIMED, DIALECT) };
const FOLD_1M = upsert(ROLLUP_TABLE['1m'], SOURCES.minutes);
const FOLD_1H_FROM_1M = upsert(ROLLUP_TABLE['1h'], SOURCES.hoursFrom1m);
const FOLD_1H_FROM_RAW = upsert(ROLLUP_TABLE['1h'], SOURCES.hoursFromRaw);

/**
 * Takes up to `maxEntries` rows of the invalidation log (deleted in this transaction) and
 * recomputes their 1m buckets from raw samples, then the 1h buckets holding them: from 1m rows
 * for hours starting at or after `rawSourceBeforeMs`, from raw samples before it. Resolves to the
 * log rows claimed, the rollup rows inserted or changed, and the buckets skipped.
 */
export async function foldInvalidatedBuckets(
  client: pg.ClientBase,
  maxEntries: number,
  rawSourceBeforeMs: number,
): Promise<FoldResult> {
  await client.query(
    `CREATE TEMP TABLE IF NOT EXISTS ${CLAIMED} (i integer, name text, app text, bucket bigint) ON COMMIT DELETE ROWS`,
  );
  await client.query(`TRUNCATE ${CLAIMED}`);
  const { rows } = await client.query<{ entries: string; buckets: string }>(
    `WITH claimed AS (
       DELETE FROM metric_rollup_invalidations
        WHERE ctid = ANY (ARRAY(SELECT ctid FROM metric_rollup_invalidations LIMIT $1))
       RETURNING name, app, bucket),
     kept AS (
       INSERT INTO ${CLAIMED}
       SELECT row_number() OVER () - 1, name, app, bucket FROM (SELECT DISTINCT name, app, bucket FROM claimed) d
       RETURNING 1)
     SELECT (SELECT count(*) FROM claimed) AS entries, (SELECT count(*) FROM kept) AS buckets`,
    [maxEntries],
  );
  const entries = Number(rows[0]?.entries ?? 0);
  const buckets = Number(rows[0]?.buckets ?? 0);
  if (buckets === 0) return { entries, buckets, rows1m: 0, rows1h: 0, skipped: [] };
  // The planner knows nothing of a fresh temporary table; a few rows or many change the join.
  await client.query(`ANALYZE ${CLAIMED}`);
  const fold = new IsolatingFold(buckets);
  for (let range = fold.next(); range !== null; range = fold.next()) {
    await client.query('SAVEPOINT sluice_fold');
    try {
      const rows1m = (await client.query(FOLD_1M, [range.from, range.to])).rowCount ?? 0;
      const hours = [range.from, range.to, rawSourceBeforeMs];
      const rows1h =
        ((await client.query(FOLD_1H_FROM_1M, hours)).rowCount ?? 0) +
        ((await client.query(FOLD_1H_FROM_RAW, hours)).rowCount ?? 0);
      await client.query('RELEASE SAVEPOINT sluice_fold');
      fold.folded({ rows1m, rows1h });
    } catch (err) {
      fold.failed(err);
      await client.query('ROLLBACK TO SAVEPOINT sluice_fold');
      await client.query('RELEASE SAVEPOINT sluice_fold');
    }
  }
  return {
    entries,
    buckets,
    rows1m: fold.rows1m,
    rows1h: fold.rows1h,
    skipped: await skippedBuckets(client, fold),
  };
}

/** The skipped buckets' names, from the claimed table (still there: it empties at commit). */
async function skippedBuckets(client: pg.ClientBase, fold: IsolatingFold): Promise<SkippedBucket[]> {
  if (fold.skipped.length === 0) return [];
  const errors = new Map(fold.skipped.map((s) => [s.index, s.error]));
  const { rows } = await client.query<{ i: number; name: string; app: string; bucket: string }>(
    `SELECT i, name, app, bucket FROM ${CLAIMED} WHERE i = ANY ($1::integer[]) ORDER BY i`,
    [[...errors.keys()]],
  );
  return rows.map((r) => ({
    name: r.name,
    app: r.app,
    bucket: Number(r.bucket),
    error: errors.get(r.i) ?? '',
  }));
}
