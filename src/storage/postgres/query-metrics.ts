import type { MetricPage, MetricQuery } from '../port';
import { positionalParams } from './positional-params';
import { floatSum } from './float-sum';
import { bucketsBefore, bucketsFrom } from './sample-buckets';
import type { ReadQuery } from './read-pool';
import { metricPageOf, rowsToRead } from '../layout/metric-page';
import { ROLLUP_TABLE, toRollupPoint, type RollupResolution } from '../layout/rollups';
import { toMetricPoint, type MetricPointRow } from '../layout/rows';

interface PgRow extends Omit<MetricPointRow, 'ts' | 'count'> {
  readonly ts: string;
  readonly id: string;
  readonly count: string | null;
}

interface PgRollupRow {
  readonly bucket: string;
  readonly app: string;
  readonly count: string;
  readonly min: number;
  readonly max: number;
  readonly sum: number;
}

/**
 * `raw`: every sample and summary of the names, oldest first by `(ts, id)`: each name's blocks of
 * the window (`metric_sample_values`, their numbers only) read in order on
 * `metric_blocks_name_bucket` (sample-buckets.ts; `bucket, ts, id` is the order of `ts, id`, the
 * bucket being the minute of `ts`), each minute's samples sorted, then the names merged. `1m` / `1h`: one point per bucket and app from the rollups the downsample job
 * maintains (empty until it has run), the names' rows of a bucket merged; in `(bucket, app)` order
 * on the rollup's key.
 */
export async function queryMetrics(read: ReadQuery, q: MetricQuery): Promise<MetricPage> {
  if (q.resolution !== 'raw') return queryRollups(read, q.resolution, q);
  const { values, param } = positionalParams();
  const limit = param(rowsToRead(q.limit));
  const shared: string[] = [];
  if (q.app !== undefined) shared.push(`app = ${param(q.app)}`);
  if (q.from !== undefined) shared.push(`ts >= ${param(q.from)}`, bucketsFrom('bucket', q.from, param));
  if (q.to !== undefined) {
    const to = param(q.to);
    shared.push(`ts < ${to}`, bucketsBefore('bucket', to));
  }
  if (q.after !== undefined) {
    shared.push(
      `(ts, id) > (${param(q.after.ts)}, ${param(q.after.key)}::uuid)`,
      bucketsFrom('bucket', q.after.ts, param),
    );
  }
  const branches = q.names.map(
    (name) =>
      `(SELECT ts, id, app, value, count, min, max, sum FROM metric_sample_values
         WHERE ${[`name = ${param(name)}`, ...shared].join(' AND ')} ORDER BY bucket ASC, ts ASC, id ASC LIMIT ${limit})`,
  );
  const { rows } = await read<PgRow>(
    `SELECT ts, id::text AS id, app, value, count, min, max, sum
       FROM (${branches.join(' UNION ALL ')}) m ORDER BY ts ASC, id ASC LIMIT ${limit}`,
    values,
  );
  return metricPageOf(
    rows,
    q.limit,
    (r) => toMetricPoint({ ...r, ts: Number(r.ts), count: r.count === null ? null : Number(r.count) }),
    (r) => ({ ts: Number(r.ts), key: r.id }),
  );
}

/** Buckets of the names at a rolled-up resolution, oldest first; `from`/`to` bound the bucket start. */
async function queryRollups(
  read: ReadQuery,
  resolution: RollupResolution,
  q: MetricQuery,
): Promise<MetricPage> {
  const { values, param } = positionalParams();
  const where = [`name = ANY(${param(q.names)}::text[])`];
  if (q.app !== undefined) where.push(`app = ${param(q.app)}`);
  if (q.from !== undefined) where.push(`bucket >= ${param(q.from)}`);
  if (q.to !== undefined) where.push(`bucket < ${param(q.to)}`);
  if (q.after !== undefined)
    where.push(`(bucket, app) > (${param(q.after.ts)}, ${param(q.after.key)}::text)`);
  const { rows } = await read<PgRollupRow>(
    // The names' sums are each within a double; together they may not be (see float-sum.ts).
    `SELECT bucket, app, sum(count) AS count, min(min) AS min, max(max) AS max, ${floatSum('sum')} AS sum
       FROM ${ROLLUP_TABLE[resolution]}
      WHERE ${where.join(' AND ')}
      GROUP BY bucket, app ORDER BY bucket ASC, app ASC LIMIT ${param(rowsToRead(q.limit))}`,
    values,
  );
  return metricPageOf(
    rows,
    q.limit,
    (r) => toRollupPoint({ ...r, bucket: Number(r.bucket), count: Number(r.count) }),
    (r) => ({ ts: Number(r.bucket), key: r.app }),
  );
}
