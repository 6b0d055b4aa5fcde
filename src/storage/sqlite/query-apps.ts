import type Database from 'better-sqlite3';
import type { AppActivityRow, AppsQuery, MetricSeriesQuery, MetricSeriesRow } from '../port';
import { appsSql, metricSeriesSql, toAppActivity, type AppsSqlRow } from '../layout/activity-sql';
import { namedParams } from './named-params';

type Prepare = (sql: string) => Database.Statement;

/** Apps seen in a window (costs: layout/activity-sql.ts). */
export function queryApps(prepare: Prepare, q: AppsQuery): AppActivityRow[] {
  const { params, param } = namedParams();
  const rows = prepare(appsSql(q, param)).all(params) as AppsSqlRow[];
  return rows.map((r) => toAppActivity(r, q.countLimit));
}

/** Metric series seen in a window (costs: layout/activity-sql.ts). */
export function queryMetricSeries(prepare: Prepare, q: MetricSeriesQuery): MetricSeriesRow[] {
  const { params, param } = namedParams();
  return prepare(metricSeriesSql(q, param)).all(params) as MetricSeriesRow[];
}
