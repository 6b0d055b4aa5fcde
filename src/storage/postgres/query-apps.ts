import type { AppActivityRow, AppsQuery, MetricSeriesQuery, MetricSeriesRow } from '../port';
import { appsSql, metricSeriesSql, toAppActivity, type AppsSqlRow } from '../layout/activity-sql';
import { positionalParams } from './positional-params';
import type { ReadQuery } from './read-pool';

/** Apps seen in a window (costs: layout/activity-sql.ts). */
export async function queryApps(read: ReadQuery, q: AppsQuery): Promise<AppActivityRow[]> {
  const { values, param } = positionalParams();
  const { rows } = await read<AppsSqlRow>(appsSql(q, param), values);
  return rows.map((r) => toAppActivity(r, q.countLimit));
}

/** Metric series seen in a window (costs: layout/activity-sql.ts). */
export async function queryMetricSeries(read: ReadQuery, q: MetricSeriesQuery): Promise<MetricSeriesRow[]> {
  const { values, param } = positionalParams();
  return (await read<MetricSeriesRow>(metricSeriesSql(q, param), values)).rows;
}
