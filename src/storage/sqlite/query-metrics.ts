import type Database from 'better-sqlite3';
import type { MetricPage, MetricQuery } from '../port';
import { metricPageOf, rowsToRead } from '../layout/metric-page';
import { ROLLUP_TABLE, toRollupPoint, type RollupResolution, type RollupRow } from '../layout/rollups';
import { toMetricPoint, type MetricPointRow } from '../layout/rows';
import { namedParams } from './named-params';

type Prepare = (sql: string) => Database.Statement;

/** As in the PostgreSQL adapter (postgres/query-metrics.ts): raw rows of the names merged by (ts, id), or rollup buckets. */
export function queryMetrics(prepare: Prepare, q: MetricQuery): MetricPage {
  if (q.resolution !== 'raw') return queryRollups(prepare, q.resolution, q);
  const { params, param } = namedParams();
  const limit = param(rowsToRead(q.limit));
  const shared: string[] = [];
  if (q.app !== undefined) shared.push(`app = ${param(q.app)}`);
  if (q.from !== undefined) shared.push(`ts >= ${param(q.from)}`);
  if (q.to !== undefined) shared.push(`ts < ${param(q.to)}`);
  if (q.after !== undefined) shared.push(`(ts, id) > (${param(q.after.ts)}, ${param(q.after.key)})`);
  const branches = q.names.map(
    (name) =>
      `SELECT * FROM (SELECT ts, id, app, value, count, min, max, sum FROM metric_samples
         WHERE ${[`name = ${param(name)}`, ...shared].join(' AND ')} ORDER BY ts ASC, id ASC LIMIT ${limit})`,
  );
  const rows = prepare(`${branches.join(' UNION ALL ')} ORDER BY ts ASC, id ASC LIMIT ${limit}`).all(
    params,
  ) as Array<MetricPointRow & { id: string }>;
  return metricPageOf(rows, q.limit, toMetricPoint, (r) => ({ ts: r.ts, key: r.id }));
}

/** Buckets of the names at a rolled-up resolution, oldest first; `from`/`to` bound the bucket start. */
function queryRollups(prepare: Prepare, resolution: RollupResolution, q: MetricQuery): MetricPage {
  const { params, param } = namedParams();
  const where = [`name IN (${q.names.map(param).join(', ')})`];
  if (q.app !== undefined) where.push(`app = ${param(q.app)}`);
  if (q.from !== undefined) where.push(`bucket >= ${param(q.from)}`);
  if (q.to !== undefined) where.push(`bucket < ${param(q.to)}`);
  if (q.after !== undefined) where.push(`(bucket, app) > (${param(q.after.ts)}, ${param(q.after.key)})`);
  const rows = prepare(
    `SELECT bucket, app, sum(count) AS count, min(min) AS min, max(max) AS max, sum(sum) AS sum
       FROM ${ROLLUP_TABLE[resolution]}
      WHERE ${where.join(' AND ')}
      GROUP BY bucket, app ORDER BY bucket ASC, app ASC LIMIT ${param(rowsToRead(q.limit))}`,
  ).all(params) as RollupRow[];
  return metricPageOf(rows, q.limit, toRollupPoint, (r) => ({ ts: r.bucket, key: r.app }));
}
