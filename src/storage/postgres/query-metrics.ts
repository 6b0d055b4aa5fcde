import type { MetricPoint, MetricQuery } from '../port';
import type { ReadQuery } from './read-pool';
import { queryRollups } from './rollups';
import { toMetricPoint, type MetricPointRow } from '../layout/rows';

interface PgRow extends Omit<MetricPointRow, 'ts' | 'count'> {
  readonly ts: string;
  readonly count: string | null;
}

/**
 * `raw`: every sample and summary, oldest first. `1m` / `1h`: one point per bucket and app from the
 * rollups the downsample job maintains (empty until it has run).
 */
export async function queryMetrics(read: ReadQuery, q: MetricQuery): Promise<MetricPoint[]> {
  if (q.resolution !== 'raw') return queryRollups(read, q.resolution, q);
  const values: unknown[] = [q.name];
  const where = ['name = $1'];
  if (q.app !== undefined) where.push(`app = $${values.push(q.app)}`);
  if (q.from !== undefined) where.push(`ts >= $${values.push(q.from)}`);
  if (q.to !== undefined) where.push(`ts < $${values.push(q.to)}`);
  const limit = `$${values.push(q.limit)}`;
  const { rows } = await read<PgRow>(
    `SELECT ts, app, value, count, min, max, sum FROM metric_samples
      WHERE ${where.join(' AND ')} ORDER BY ts ASC, id ASC LIMIT ${limit}`,
    values,
  );
  return rows.map((r) =>
    toMetricPoint({ ...r, ts: Number(r.ts), count: r.count === null ? null : Number(r.count) }),
  );
}
