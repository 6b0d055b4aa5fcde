import type Database from 'better-sqlite3';
import type { MetricPoint, MetricQuery } from '../port';
import {
  ROLLUP_TABLE,
  ROLLUP_WATERMARK_KEY,
  ROLLUP_WIDTH_MS,
  toRollupPoint,
  type RollupResolution,
  type RollupRow,
} from '../layout/rollups';

import { whereFilters } from './filters';

type Prepare = (sql: string) => Database.Statement;

/** Whole buckets recomputed from their source and replaced, as the PostgreSQL adapter does. */
const FOLD_SOURCE: Readonly<Record<RollupResolution, string>> = {
  '1m': `SELECT name, ts - ts % ${ROLLUP_WIDTH_MS['1m']}, app, sum(coalesce(count, 1)),
            min(coalesce(min, value)), max(coalesce(max, value)), sum(coalesce(sum, value))
       FROM metric_samples
      WHERE ts >= @from AND ts < @to AND coalesce(sum, value) IS NOT NULL
      GROUP BY 1, 2, 3`,
  '1h': `SELECT name, bucket - bucket % ${ROLLUP_WIDTH_MS['1h']}, app, sum(count), min(min), max(max), sum(sum)
       FROM ${ROLLUP_TABLE['1m']}
      WHERE bucket >= @from AND bucket < @to
      GROUP BY 1, 2, 3`,
};

function foldSql(resolution: RollupResolution): string {
  return `INSERT INTO ${ROLLUP_TABLE[resolution]} (name, bucket, app, count, min, max, sum)
    ${FOLD_SOURCE[resolution]}
    ON CONFLICT (name, bucket, app) DO UPDATE
       SET count = excluded.count, min = excluded.min, max = excluded.max, sum = excluded.sum
     WHERE count IS NOT excluded.count OR min IS NOT excluded.min
        OR max IS NOT excluded.max OR sum IS NOT excluded.sum`;
}

/** Recomputes the buckets whose source rows lie in [fromMs, toMs); returns rows inserted or changed. */
export function foldRollups(
  prepare: Prepare,
  resolution: RollupResolution,
  fromMs: number,
  toMs: number,
): number {
  return prepare(foldSql(resolution)).run({ from: fromMs, to: toMs }).changes;
}

export function readRollupWatermark(prepare: Prepare): number | null {
  const row = prepare('SELECT watermark_ms FROM rollup_watermarks WHERE rollup = ?').get(
    ROLLUP_WATERMARK_KEY,
  ) as { watermark_ms: number } | undefined;
  return row === undefined ? null : row.watermark_ms;
}

export function writeRollupWatermark(prepare: Prepare, watermarkMs: number): void {
  prepare(
    `INSERT INTO rollup_watermarks (rollup, watermark_ms) VALUES (?, ?)
     ON CONFLICT (rollup) DO UPDATE SET watermark_ms = excluded.watermark_ms`,
  ).run(ROLLUP_WATERMARK_KEY, Math.trunc(watermarkMs));
}

export function oldestSampleTs(prepare: Prepare): number | null {
  const row = prepare('SELECT min(ts) AS ts FROM metric_samples').get() as { ts: number | null };
  return row.ts;
}

/** Buckets of one metric at a rolled-up resolution, oldest first; `from`/`to` bound the bucket start. */
export function queryRollups(prepare: Prepare, resolution: RollupResolution, q: MetricQuery): MetricPoint[] {
  const params: Record<string, unknown> = { limit: q.limit };
  const where = whereFilters(q, 'bucket', params);
  const rows = prepare(
    `SELECT bucket, app, count, min, max, sum FROM ${ROLLUP_TABLE[resolution]}
      WHERE ${where.join(' AND ')} ORDER BY bucket ASC, app ASC LIMIT @limit`,
  ).all(params) as RollupRow[];
  return rows.map(toRollupPoint);
}
