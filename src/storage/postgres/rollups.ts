import type pg from 'pg';
import type { MetricPoint, MetricQuery } from '../port';
import { ROLLUP_TABLE, ROLLUP_WIDTH_MS, toRollupPoint, type RollupResolution } from '../layout/rollups';
import type { FoldResult } from '../maintenance';
import type { ReadQuery } from './read-pool';

/*
 * Rollup SQL for the downsample job (run on the job's transaction client) and the read side.
 * The job folds exactly the buckets the invalidation log names (see
 * migrations/003_rollup_invalidations.ts): each is recomputed whole from its source and replaces
 * what is stored, so folding a bucket twice changes nothing and a duplicate, stored once, is
 * counted once.
 */

const MINUTE_MS = ROLLUP_WIDTH_MS['1m'];
const HOUR_MS = ROLLUP_WIDTH_MS['1h'];

/** The buckets one fold takes from the log: distinct, emptied at every commit of the session. */
const TAKEN = 'sluice_rollup_buckets';

/** Figures of raw samples: a summary counts as its count. */
const RAW_FIGURES = `sum(COALESCE(s.count, 1))::bigint, min(COALESCE(s.min, s.value)),
            max(COALESCE(s.max, s.value)), sum(COALESCE(s.sum, s.value))`;

/** Rows whose figures are unchanged are not rewritten: no dead tuples, and the count says what changed. */
function upsert(table: string, select: string): string {
  return `INSERT INTO ${table} AS r (name, bucket, app, count, min, max, sum)
    ${select}
    ON CONFLICT (name, bucket, app) DO UPDATE
       SET count = EXCLUDED.count, min = EXCLUDED.min, max = EXCLUDED.max, sum = EXCLUDED.sum
     WHERE (r.count, r.min, r.max, r.sum) IS DISTINCT FROM (EXCLUDED.count, EXCLUDED.min, EXCLUDED.max, EXCLUDED.sum)`;
}

/** Hours of the taken minutes (`$1`: hours from it on fold from 1m rows, older ones from raw). */
const TAKEN_HOURS = `SELECT DISTINCT name, app, bucket - bucket % ${HOUR_MS} AS hour FROM ${TAKEN}`;

const FOLD_1M = upsert(
  ROLLUP_TABLE['1m'],
  `SELECT s.name, s.ts - s.ts % ${MINUTE_MS}, s.app, ${RAW_FIGURES}
     FROM ${TAKEN} b JOIN metric_samples s
       ON s.name = b.name AND s.app = b.app AND s.ts >= b.bucket AND s.ts < b.bucket + ${MINUTE_MS}
    WHERE COALESCE(s.sum, s.value) IS NOT NULL
    GROUP BY 1, 2, 3`,
);

const FOLD_1H_FROM_1M = upsert(
  ROLLUP_TABLE['1h'],
  `SELECT m.name, h.hour, m.app, sum(m.count)::bigint, min(m.min), max(m.max), sum(m.sum)
     FROM (${TAKEN_HOURS}) h JOIN ${ROLLUP_TABLE['1m']} m
       ON m.name = h.name AND m.app = h.app AND m.bucket >= h.hour AND m.bucket < h.hour + ${HOUR_MS}
    WHERE h.hour >= $1
    GROUP BY 1, 2, 3`,
);

const FOLD_1H_FROM_RAW = upsert(
  ROLLUP_TABLE['1h'],
  `SELECT s.name, h.hour, s.app, ${RAW_FIGURES}
     FROM (${TAKEN_HOURS}) h JOIN metric_samples s
       ON s.name = h.name AND s.app = h.app AND s.ts >= h.hour AND s.ts < h.hour + ${HOUR_MS}
    WHERE h.hour < $1 AND COALESCE(s.sum, s.value) IS NOT NULL
    GROUP BY 1, 2, 3`,
);

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

interface PgRollupRow {
  readonly bucket: string;
  readonly app: string;
  readonly count: string;
  readonly min: number;
  readonly max: number;
  readonly sum: number;
}

/** Buckets of one metric at a rolled-up resolution, oldest first; `from`/`to` bound the bucket start. */
export async function queryRollups(
  read: ReadQuery,
  resolution: RollupResolution,
  q: MetricQuery,
): Promise<MetricPoint[]> {
  const values: unknown[] = [q.name];
  const where = ['name = $1'];
  if (q.app !== undefined) where.push(`app = $${values.push(q.app)}`);
  if (q.from !== undefined) where.push(`bucket >= $${values.push(q.from)}`);
  if (q.to !== undefined) where.push(`bucket < $${values.push(q.to)}`);
  const limit = `$${values.push(q.limit)}`;
  const { rows } = await read<PgRollupRow>(
    `SELECT bucket, app, count, min, max, sum FROM ${ROLLUP_TABLE[resolution]}
      WHERE ${where.join(' AND ')} ORDER BY bucket ASC, app ASC LIMIT ${limit}`,
    values,
  );
  return rows.map((r) => toRollupPoint({ ...r, bucket: Number(r.bucket), count: Number(r.count) }));
}
