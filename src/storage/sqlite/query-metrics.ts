import type Database from 'better-sqlite3';
import type { MetricPoint, MetricQuery } from '../port';
import { toMetricPoint, type MetricPointRow } from '../postgres/row-mapping';

/** Raw resolution only, as in the PostgreSQL adapter. Oldest first. */
export function queryMetrics(prepare: (sql: string) => Database.Statement, q: MetricQuery): MetricPoint[] {
  if (q.resolution !== 'raw') throw new Error('resolution not available yet');
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
