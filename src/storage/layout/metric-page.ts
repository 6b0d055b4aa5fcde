import type { MetricPage, MetricPoint, MetricPosition } from '../port';

/*
 * Paging of `queryMetrics`, for both adapters: a page reads one row more than it returns, so `next`
 * is set only when more points follow.
 */

/** Rows a page query asks for: one more than the page holds. */
export function rowsToRead(limit: number): number {
  return limit + 1;
}

/** The page of `limit` points from rows read as `rowsToRead(limit)`; `positionOf` gives a row's keyset position. */
export function metricPageOf<Row>(
  rows: readonly Row[],
  limit: number,
  toPoint: (row: Row) => MetricPoint,
  positionOf: (row: Row) => MetricPosition,
): MetricPage {
  const kept = rows.slice(0, limit);
  const last = kept[kept.length - 1];
  return {
    points: kept.map(toPoint),
    next: rows.length > limit && last !== undefined ? positionOf(last) : null,
  };
}
