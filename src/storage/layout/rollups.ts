import type { MetricPoint } from '../port';

/*
 * The rollup layout both adapters share (pure definitions only, like rows.ts): one table
 * per resolution, each row one bucket of one (name, app) series.
 */

export type RollupResolution = '1m' | '1h';

/** Finest first: each resolution is folded from the one before it (1m from raw samples). */
export const ROLLUP_RESOLUTIONS: readonly RollupResolution[] = ['1m', '1h'];

/** Bucket width (milliseconds). Buckets are aligned on multiples of it from the Unix epoch (UTC). */
export const ROLLUP_WIDTH_MS: Readonly<Record<RollupResolution, number>> = {
  '1m': 60_000,
  '1h': 3_600_000,
};

export const ROLLUP_TABLE: Readonly<Record<RollupResolution, string>> = {
  '1m': 'metric_rollups_1m',
  '1h': 'metric_rollups_1h',
};

/** One UTC day (milliseconds): the bucket of raw rows (daily partitions, purge cutoffs). */
export const DAY_MS = 86_400_000;

/** A rollup row as read back. */
export interface RollupRow {
  readonly bucket: number;
  readonly app: string;
  readonly count: number;
  readonly min: number;
  readonly max: number;
  readonly sum: number;
}

/** One bucket as a point: `ts` is the bucket start, avg is sum / count. */
export function toRollupPoint(row: RollupRow): MetricPoint {
  return {
    ts: row.bucket,
    app: row.app,
    count: row.count,
    min: row.min,
    max: row.max,
    sum: row.sum,
    avg: row.sum / row.count,
  };
}

/** `ms` rounded down to a multiple of `width`. */
export function floorTo(ms: number, width: number): number {
  return Math.floor(ms / width) * width;
}
