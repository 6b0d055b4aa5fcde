import type pg from 'pg';
import type { MetricPoint, MetricQuery } from '../port';
import {
  ROLLUP_TABLE,
  ROLLUP_WATERMARK_KEY,
  ROLLUP_WIDTH_MS,
  toRollupPoint,
  type RollupResolution,
} from '../layout/rollups';

/*
 * Rollup SQL for the downsample job (run on the job's transaction client) and the read side.
 * A fold recomputes whole buckets from their source and replaces what is stored: running it
 * twice over the same data changes nothing, and a bucket that received late events is simply
 * folded again.
 */

/** Where each resolution is folded from: 1m from raw samples (a summary counts as its count), 1h from 1m. */
const FOLD_SOURCE: Readonly<Record<RollupResolution, string>> = {
  '1m': `SELECT name, ts - ts % ${ROLLUP_WIDTH_MS['1m']} AS bucket, app,
            sum(COALESCE(count, 1))::bigint AS count, min(COALESCE(min, value)) AS min,
            max(COALESCE(max, value)) AS max, sum(COALESCE(sum, value)) AS sum
       FROM metric_samples
      WHERE ts >= $1 AND ts < $2 AND COALESCE(sum, value) IS NOT NULL
      GROUP BY 1, 2, 3`,
  '1h': `SELECT name, bucket - bucket % ${ROLLUP_WIDTH_MS['1h']} AS bucket, app,
            sum(count)::bigint AS count, min(min) AS min, max(max) AS max, sum(sum) AS sum
       FROM ${ROLLUP_TABLE['1m']}
      WHERE bucket >= $1 AND bucket < $2
      GROUP BY 1, 2, 3`,
};

function foldSql(resolution: RollupResolution): string {
  // Rows whose figures are unchanged are not rewritten: no dead tuples, and the row count says
  // what really changed.
  return `INSERT INTO ${ROLLUP_TABLE[resolution]} AS r (name, bucket, app, count, min, max, sum)
    ${FOLD_SOURCE[resolution]}
    ON CONFLICT (name, bucket, app) DO UPDATE
       SET count = EXCLUDED.count, min = EXCLUDED.min, max = EXCLUDED.max, sum = EXCLUDED.sum
     WHERE (r.count, r.min, r.max, r.sum) IS DISTINCT FROM (EXCLUDED.count, EXCLUDED.min, EXCLUDED.max, EXCLUDED.sum)`;
}

/**
 * Recomputes every `resolution` bucket whose source rows lie in [fromMs, toMs) (both multiples of
 * the source's bucket width, so no source bucket is cut). Resolves to the rollup rows inserted or
 * changed.
 */
export async function foldRollups(
  client: pg.ClientBase,
  resolution: RollupResolution,
  fromMs: number,
  toMs: number,
): Promise<number> {
  const result = await client.query(foldSql(resolution), [fromMs, toMs]);
  return result.rowCount ?? 0;
}

/** The downsample watermark (epoch ms), or null before the first run. */
export async function readRollupWatermark(client: pg.ClientBase): Promise<number | null> {
  const { rows } = await client.query<{ watermark_ms: string }>(
    'SELECT watermark_ms FROM rollup_watermarks WHERE rollup = $1',
    [ROLLUP_WATERMARK_KEY],
  );
  const row = rows[0];
  return row === undefined ? null : Number(row.watermark_ms);
}

export async function writeRollupWatermark(client: pg.ClientBase, watermarkMs: number): Promise<void> {
  await client.query(
    `INSERT INTO rollup_watermarks (rollup, watermark_ms) VALUES ($1, $2)
     ON CONFLICT (rollup) DO UPDATE SET watermark_ms = EXCLUDED.watermark_ms`,
    [ROLLUP_WATERMARK_KEY, watermarkMs],
  );
}

/** ts of the oldest stored metric sample, or null when there is none. */
export async function oldestSampleTs(client: pg.ClientBase): Promise<number | null> {
  const { rows } = await client.query<{ ts: string | null }>('SELECT min(ts) AS ts FROM metric_samples');
  const ts = rows[0]?.ts;
  return ts === null || ts === undefined ? null : Number(ts);
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
  pool: pg.Pool,
  resolution: RollupResolution,
  q: MetricQuery,
): Promise<MetricPoint[]> {
  const values: unknown[] = [q.name];
  const where = ['name = $1'];
  if (q.app !== undefined) where.push(`app = $${values.push(q.app)}`);
  if (q.from !== undefined) where.push(`bucket >= $${values.push(q.from)}`);
  if (q.to !== undefined) where.push(`bucket < $${values.push(q.to)}`);
  const limit = `$${values.push(q.limit)}`;
  const { rows } = await pool.query<PgRollupRow>(
    `SELECT bucket, app, count, min, max, sum FROM ${ROLLUP_TABLE[resolution]}
      WHERE ${where.join(' AND ')} ORDER BY bucket ASC, app ASC LIMIT ${limit}`,
    values,
  );
  return rows.map((r) => toRollupPoint({ ...r, bucket: Number(r.bucket), count: Number(r.count) }));
}
