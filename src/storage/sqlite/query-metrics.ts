import type Database from 'better-sqlite3';
import type { MetricPoint, MetricQuery } from '../port';
import { toMetricPoint, type MetricPointRow } from '../postgres/row-mapping';
import { queryRollups } from './rollups';

/** As in the PostgreSQL adapter: raw samples, or one point per bucket and app from the rollups. Oldest first. */
export function queryMetrics(prepare: (sql: string) => Database.Statement, q: MetricQuery): MetricPoint[] {
  if (q.resolution !== 'raw') return queryRollups(prepare, q.resolution, q);
  const params: Record<string, unknown> = { name: q.name, limit: q.limit };
  const where = ['name = @name'];
  const add = (clause: string, key: string, value: unknown): void => {
    where.push(clause);
    params[key] = value;
  };
  if (q.app !== undefined) add('app = @app', 'app', q.app);
  if (q.from !== undefined) add('ts >= @from', 'from', q.from);
  if (q.to !== undefined) add('ts < @to', 'to', q.to);
  const rows = prepare(
    `SELECT ts, app, value, count, min, max, sum FROM metric_samples
      WHERE ${where.join(' AND ')} ORDER BY ts ASC, id ASC LIMIT @limit`,
  ).all(params) as MetricPointRow[];
  return rows.map(toMetricPoint);
}
