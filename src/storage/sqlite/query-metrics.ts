import type Database from 'better-sqlite3';
import type { MetricPoint, MetricQuery } from '../port';
import { toMetricPoint, type MetricPointRow } from '../layout/rows';
import { whereFilters } from './filters';
import { queryRollups } from './rollups';

/** As in the PostgreSQL adapter: raw samples, or one point per bucket and app from the rollups. Oldest first. */
export function queryMetrics(prepare: (sql: string) => Database.Statement, q: MetricQuery): MetricPoint[] {
  if (q.resolution !== 'raw') return queryRollups(prepare, q.resolution, q);
  const params: Record<string, unknown> = { limit: q.limit };
  const where = whereFilters(q, 'ts', params);
  const rows = prepare(
    `SELECT ts, app, value, count, min, max, sum FROM metric_samples
      WHERE ${where.join(' AND ')} ORDER BY ts ASC, id ASC LIMIT @limit`,
  ).all(params) as MetricPointRow[];
  return rows.map(toMetricPoint);
}
