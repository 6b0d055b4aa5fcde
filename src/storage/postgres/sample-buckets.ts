import { ROLLUP_WIDTH_MS, floorTo } from '../layout/rollups';
import type { Param } from '../layout/sql-param';

/*
 * Bounds on `metric_samples.bucket` implied by bounds on `ts` (migration 9). The view knows a
 * sample's `ts` only once its block is unnested, so a read bounded on `ts` alone unnests every
 * block it may reach; bounded on `bucket` as well, it reads only the blocks of its minutes, through
 * `metric_blocks_bucket` or `metric_blocks_name_bucket`. A block holds samples with
 * bucket <= ts < bucket + 1 minute (`bucket = ts - ts % 60000`, and no stored ts is negative: the
 * collector takes recent ones only), so each bound keeps every block that may hold a match.
 */

/** A block's width: the UTC minute of its samples. */
export const BLOCK_MS = ROLLUP_WIDTH_MS['1m'];

/** The blocks that may hold a sample with `ts >= from` (or `(ts, id) >` a position at `from`). */
export function bucketsFrom(column: string, from: number, param: Param): string {
  return `${column} >= ${param(floorTo(from, BLOCK_MS))}`;
}

/** The blocks that may hold a sample with `ts < to`, `to` a placeholder or expression. */
export function bucketsBefore(column: string, to: string): string {
  return `${column} < ${to}`;
}

/** The blocks that may hold a sample with `ts <= last`, `last` a placeholder or expression. */
export function bucketsUpTo(column: string, last: string): string {
  return `${column} <= ${last}`;
}
