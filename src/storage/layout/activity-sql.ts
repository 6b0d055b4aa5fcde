import type { AppActivityRow, AppsQuery, MetricSeriesQuery, MetricSeriesRow } from '../port';
import type { ReadRunner } from './read-runner';
import { ROLLUP_TABLE, ROLLUP_WIDTH_MS, floorTo } from './rollups';
import type { Param } from './sql-param';

/*
 * The reads that find apps and metric series, in SQL both adapters run (like rollup-folds.ts).
 * Raw metric samples have no index by app, so metrics are found through what the downsample job
 * maintains: the 1h rollups of the window (their bucket index: one row per series and hour), the
 * 1m rollups of a series' newest hour, and the invalidation log (the buckets written since the
 * last run; no index, as long as the writes since then). A window [from, to) touches the buckets
 * that start before `to` and end after `from`.
 */

/** What the adapters' `metric_samples` need to read a series' samples of a range of minutes. */
export interface ActivityDialect {
  /**
   * The conditions on `metric_samples ms` that keep the samples of [start, start + widthMs)
   * (`start` an SQL expression of a minute's start), and the ORDER BY that reads them oldest first.
   */
  samplesWithin(start: string, widthMs: number): { readonly where: string; readonly oldestFirst: string };
}

/** `metric_samples` as a table of rows, read in `(name, ts)` order: SQLite's. */
export const ROW_SAMPLES_DIALECT: ActivityDialect = {
  samplesWithin: (start, widthMs) => ({
    where: `ms.ts >= ${start} AND ms.ts < ${start} + ${widthMs}`,
    oldestFirst: 'ms.ts ASC',
  }),
};

/** Most distinct apps the skip scan of `events` visits (one index probe each, per partition). */
export const MAX_APPS_VISITED = 10_000;
const MINUTE_MS = ROLLUP_WIDTH_MS['1m'];
const HOUR_MS = ROLLUP_WIDTH_MS['1h'];

/**
 * Apps seen in [from, to): the distinct apps of `events` by a skip scan of `events_app_ts_id`, each
 * with its newest event in the window (one probe) and its events counted up to `countLimit + 1`
 * (an index range read); metric apps from the 1h rollups, with their newest minute from the 1m
 * rollups of their newest hour (the bucket index over that hour: at most 60 rows per series) and
 * the invalidation log.
 */
function appsSql(q: AppsQuery, param: Param): string {
  const from = param(q.from);
  const to = param(q.to);
  const fromMinute = param(floorTo(q.from, MINUTE_MS));
  return `WITH RECURSIVE event_apps(app, depth) AS (
       SELECT min(app), 1 FROM events
       UNION ALL
       SELECT (SELECT min(e.app) FROM events e WHERE e.app > a.app), a.depth + 1
         FROM event_apps a WHERE a.app IS NOT NULL AND a.depth < ${param(MAX_APPS_VISITED)}
     ),
     seen AS (
       SELECT a.app,
              (SELECT max(e.ts) FROM events e WHERE e.app = a.app AND e.ts >= ${from} AND e.ts < ${to}) AS last_event_ts,
              (SELECT count(*) FROM (SELECT 1 FROM events e
                 WHERE e.app = a.app AND e.ts >= ${from} AND e.ts < ${to} LIMIT ${param(q.countLimit + 1)}) c) AS events
         FROM event_apps a WHERE a.app IS NOT NULL
     ),
     hours AS (
       SELECT app, sum(count) AS samples, max(bucket) AS hour FROM ${ROLLUP_TABLE['1h']}
        WHERE bucket >= ${param(floorTo(q.from, HOUR_MS))} AND bucket < ${to} GROUP BY app
     ),
     metric_apps AS (
       SELECT coalesce(h.app, l.app) AS app, coalesce(h.samples, 0) AS samples, l.minute AS log_minute,
              (SELECT max(m.bucket) FROM ${ROLLUP_TABLE['1m']} m
                WHERE m.app = h.app AND m.bucket >= h.hour AND m.bucket < h.hour + ${HOUR_MS} AND m.bucket < ${to}
              ) AS rolled_minute
         FROM hours h
         FULL JOIN (SELECT app, max(bucket) AS minute FROM metric_rollup_invalidations
                     WHERE bucket >= ${fromMinute} AND bucket < ${to} GROUP BY app) l ON l.app = h.app
     )
     SELECT coalesce(s.app, m.app) AS app, s.last_event_ts, coalesce(s.events, 0) AS events,
            m.log_minute, m.rolled_minute, coalesce(m.samples, 0) AS metric_samples
       FROM (SELECT * FROM seen WHERE last_event_ts IS NOT NULL) s
       FULL JOIN metric_apps m ON m.app = s.app
      ORDER BY 1 LIMIT ${param(q.maxApps)}`;
}

/** A row of `appsSql` (PostgreSQL gives bigints and counts as strings). */
interface AppsSqlRow {
  readonly app: string;
  readonly last_event_ts: number | string | null;
  readonly events: number | string;
  /** Newest minute of the app's samples not folded yet (the invalidation log). */
  readonly log_minute: number | string | null;
  /** Newest 1m rollup bucket of the app's newest 1h bucket. */
  readonly rolled_minute: number | string | null;
  readonly metric_samples: number | string;
}

const numberOrNull = (v: number | string | null): number | null => (v === null ? null : Number(v));

function newest(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.max(a, b);
}

function toAppActivity(r: AppsSqlRow, countLimit: number): AppActivityRow {
  const events = Number(r.events);
  return {
    app: r.app,
    lastEventTs: numberOrNull(r.last_event_ts),
    events: Math.min(events, countLimit),
    eventsCapped: events > countLimit,
    lastMetricMinute: newest(numberOrNull(r.log_minute), numberOrNull(r.rolled_minute)),
    metricSamples: Number(r.metric_samples),
  };
}

/**
 * The (name, app) series seen in [from, to), from the 1h rollups and the invalidation log. Each
 * series' kind is the shape of its first raw row at or after its newest bucket's start: one read of
 * that name's samples oldest first (the dialect's order) that skips other apps' rows, for at most
 * an hour of them.
 */
function metricSeriesSql(q: MetricSeriesQuery, param: Param, d: ActivityDialect): string {
  const to = param(q.to);
  const app = q.app === undefined ? '' : `AND app = ${param(q.app)}`;
  const newest = d.samplesWithin('s.newest', HOUR_MS);
  return `SELECT s.name, s.app,
            (SELECT CASE WHEN ms.count IS NULL THEN 'sample' ELSE 'summary' END FROM metric_samples ms
              WHERE ms.name = s.name AND ms.app = s.app AND ${newest.where}
              ORDER BY ${newest.oldestFirst} LIMIT 1) AS kind
       FROM (SELECT name, app, max(bucket) AS newest FROM (
               SELECT name, app, bucket FROM metric_rollup_invalidations
                WHERE bucket >= ${param(floorTo(q.from, MINUTE_MS))} AND bucket < ${to} ${app}
               UNION ALL
               SELECT name, app, bucket FROM ${ROLLUP_TABLE['1h']}
                WHERE bucket >= ${param(floorTo(q.from, HOUR_MS))} AND bucket < ${to} ${app}
             ) x GROUP BY name, app ORDER BY name, app LIMIT ${param(q.maxSeries)}) s
      ORDER BY s.name, s.app`;
}

/** `Storage.queryApps` on an adapter's runner. */
export async function queryAppsWith(run: ReadRunner, q: AppsQuery): Promise<AppActivityRow[]> {
  const rows = await run.rows<AppsSqlRow>((param) => appsSql(q, param));
  return rows.map((r) => toAppActivity(r, q.countLimit));
}

/** `Storage.queryMetricSeries` on an adapter's runner and its `metric_samples`. */
export function queryMetricSeriesWith(
  run: ReadRunner,
  q: MetricSeriesQuery,
  d: ActivityDialect = ROW_SAMPLES_DIALECT,
): Promise<MetricSeriesRow[]> {
  return run.rows<MetricSeriesRow>((param) => metricSeriesSql(q, param, d));
}
