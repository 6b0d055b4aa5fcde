import type {
  AppActivityRow,
  AppsPage,
  AppsQuery,
  MetricNameQuery,
  MetricNamesPage,
  MetricNamesQuery,
  StoredMetricName,
} from '../port';
import { horizonSql, nameRange, pageOf, pageRowsSql, skipScan, startsWith, type PageRow } from './name-pages';
import type { ReadRunner } from './read-runner';
import { ROLLUP_TABLE, ROLLUP_WIDTH_MS, floorTo } from './rollups';
import type { Param } from './sql-param';

/*
 * The reads that list apps and metric names, in SQL both adapters run (like rollup-folds.ts), a
 * page at a time (name-pages.ts). Raw metric samples have no index by app, so metrics are found
 * through what the downsample job maintains: the 1h rollups (keyed by name, and indexed by app:
 * migration 10), the 1m rollups of an app (its newest minute), and the invalidation log (the
 * buckets written since the last run; no index, as long as the writes since then). A window
 * [from, to) touches the buckets that start before `to` and end after `from`.
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

const MINUTE_MS = ROLLUP_WIDTH_MS['1m'];
const HOUR_MS = ROLLUP_WIDTH_MS['1h'];
const H1 = ROLLUP_TABLE['1h'];
const M1 = ROLLUP_TABLE['1m'];
const LOG = 'metric_rollup_invalidations';

/**
 * A page of apps seen in [from, to): the distinct apps of `events` (a skip scan of
 * `events_app_ts_id`) and of the 1h rollups (of `(app, bucket)`), and those of the invalidation
 * log; each with data in the window (one probe per source), its newest event and its events
 * counted up to `countLimit + 1` (index range reads), its samples from at most `sampleRowsLimit`
 * 1h rollup rows, its newest minute from the 1m rollups (one probe of `(app, bucket)`) and the log.
 */
function appsSql(q: AppsQuery, param: Param): string {
  const from = param(q.from);
  const to = param(q.to);
  const fromMinute = param(floorTo(q.from, MINUTE_MS));
  const fromHour = param(floorTo(q.from, HOUR_MS));
  const none = () => '';
  return `WITH RECURSIVE ${skipScan('event_apps', 'events', 'app', none, q, param)},
    ${skipScan('rollup_apps', H1, 'app', none, q, param)},
    logged AS (
      SELECT app AS name, max(bucket) AS minute FROM ${LOG}
       WHERE bucket >= ${fromMinute} AND bucket < ${to}${nameRange('app', q, param)} GROUP BY app
    ),
    page AS (
      SELECT c.name, row_number() OVER (ORDER BY c.name) AS k FROM (
        SELECT c.name FROM (
          SELECT name FROM event_apps WHERE name IS NOT NULL
          UNION SELECT name FROM rollup_apps WHERE name IS NOT NULL
          UNION SELECT name FROM logged
        ) c
        WHERE (${horizonSql(['event_apps', 'rollup_apps'], q, param)} IS NULL
               OR c.name <= ${horizonSql(['event_apps', 'rollup_apps'], q, param)})${startsWith('c.name', q, param)}
          AND (EXISTS (SELECT 1 FROM events e WHERE e.app = c.name AND e.ts >= ${from} AND e.ts < ${to})
            OR EXISTS (SELECT 1 FROM ${H1} r WHERE r.app = c.name AND r.bucket >= ${fromHour} AND r.bucket < ${to})
            OR c.name IN (SELECT name FROM logged))
        ORDER BY c.name LIMIT ${param(q.limit + 1)}
      ) c
    )
    ${pageRowsSql(horizonSql(['event_apps', 'rollup_apps'], q, param), [
      `(SELECT max(e.ts) FROM events e WHERE e.app = p.name AND e.ts >= ${from} AND e.ts < ${to}) AS last_event_ts`,
      `(SELECT count(*) FROM (SELECT 1 FROM events e
          WHERE e.app = p.name AND e.ts >= ${from} AND e.ts < ${to} LIMIT ${param(q.countLimit + 1)}) c) AS events`,
      `(SELECT coalesce(sum(s.count), 0) FROM (SELECT r.count FROM ${H1} r
          WHERE r.app = p.name AND r.bucket >= ${fromHour} AND r.bucket < ${to} LIMIT ${param(q.sampleRowsLimit)}) s) AS metric_samples`,
      `(SELECT count(*) FROM (SELECT 1 FROM ${H1} r
          WHERE r.app = p.name AND r.bucket >= ${fromHour} AND r.bucket < ${to} LIMIT ${param(q.sampleRowsLimit + 1)}) s) AS sample_rows`,
      `(SELECT max(m.bucket) FROM ${M1} m WHERE m.app = p.name AND m.bucket >= ${fromMinute} AND m.bucket < ${to}) AS rolled_minute`,
      `(SELECT l.minute FROM logged l WHERE l.name = p.name) AS log_minute`,
    ])}`;
}

/** A row of `appsSql` (PostgreSQL gives bigints and counts as strings). */
interface AppsSqlRow extends PageRow {
  readonly last_event_ts: number | string | null;
  readonly events: number | string;
  readonly metric_samples: number | string;
  readonly sample_rows: number | string;
  readonly rolled_minute: number | string | null;
  /** Newest minute of the app's samples not folded yet (the invalidation log). */
  readonly log_minute: number | string | null;
}

const numberOrNull = (v: number | string | null): number | null => (v === null ? null : Number(v));

function newest(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.max(a, b);
}

function toAppActivity(r: AppsSqlRow, q: AppsQuery): AppActivityRow {
  const events = Number(r.events);
  return {
    app: r.name as string,
    lastEventTs: numberOrNull(r.last_event_ts),
    events: Math.min(events, q.countLimit),
    eventsCapped: events > q.countLimit,
    lastMetricMinute: newest(numberOrNull(r.log_minute), numberOrNull(r.rolled_minute)),
    metricSamples: Number(r.metric_samples),
    metricSamplesCapped: Number(r.sample_rows) > q.sampleRowsLimit,
  };
}

/** `Storage.queryApps` on an adapter's runner. */
export async function queryAppsWith(run: ReadRunner, q: AppsQuery): Promise<AppsPage> {
  const rows = await run.rows<AppsSqlRow>((param) => appsSql(q, param));
  const page = pageOf(rows, q.limit);
  return { apps: page.rows.map((r) => toAppActivity(r, q)), next: page.next };
}

/** ` AND <alias>app = $app` when the query has an app. */
function ofApp(q: { readonly app?: string }, param: Param): (alias: string) => string {
  if (q.app === undefined) return () => '';
  const app = param(q.app);
  return (alias) => ` AND ${alias}app = ${app}`;
}

/**
 * A page of stored metric names seen in [from, to): a skip scan of the 1h rollups' names (their
 * key, or `(app, name, bucket)` for one app), each with data in the window (one probe), and the
 * names of the invalidation log.
 */
function metricNamesSql(q: MetricNamesQuery, param: Param): string {
  const to = param(q.to);
  const fromMinute = param(floorTo(q.from, MINUTE_MS));
  const fromHour = param(floorTo(q.from, HOUR_MS));
  const app = ofApp(q, param);
  return `WITH RECURSIVE ${skipScan('rolled', H1, 'name', app, q, param)},
    logged AS (
      SELECT DISTINCT name FROM ${LOG}
       WHERE bucket >= ${fromMinute} AND bucket < ${to}${app('')}${nameRange('name', q, param)}
    ),
    page AS (
      SELECT c.name, row_number() OVER (ORDER BY c.name) AS k FROM (
        SELECT c.name FROM (SELECT name FROM rolled WHERE name IS NOT NULL UNION SELECT name FROM logged) c
        WHERE (${horizonSql(['rolled'], q, param)} IS NULL OR c.name <= ${horizonSql(['rolled'], q, param)})${startsWith('c.name', q, param)}
          AND (EXISTS (SELECT 1 FROM ${H1} r
                        WHERE r.name = c.name${app('r.')} AND r.bucket >= ${fromHour} AND r.bucket < ${to})
            OR c.name IN (SELECT name FROM logged))
        ORDER BY c.name LIMIT ${param(q.limit + 1)}
      ) c
    )
    ${pageRowsSql(horizonSql(['rolled'], q, param), [])}`;
}

/** The newest bucket of a stored name in the window: its newest 1h bucket, or a newer minute of the log. */
function newestSql(q: MetricNameQuery, param: Param): string {
  const name = param(q.name);
  const to = param(q.to);
  const app = ofApp(q, param);
  return `SELECT
      (SELECT max(bucket) FROM ${H1} WHERE name = ${name}${app('')}
          AND bucket >= ${param(floorTo(q.from, HOUR_MS))} AND bucket < ${to}) AS hour,
      (SELECT max(bucket) FROM ${LOG} WHERE name = ${name}${app('')}
          AND bucket >= ${param(floorTo(q.from, MINUTE_MS))} AND bucket < ${to}) AS minute`;
}

/**
 * The shape of a stored name's first raw row at or after `newest` (one read of that name's samples
 * oldest first, skipping other apps' rows when the query has an app, for at most an hour of them).
 */
function kindSql(q: MetricNameQuery, newest: number, param: Param, d: ActivityDialect): string {
  const within = d.samplesWithin(param(newest), HOUR_MS);
  return `SELECT CASE WHEN ms.count IS NULL THEN 'sample' ELSE 'summary' END AS kind FROM metric_samples ms
     WHERE ms.name = ${param(q.name)}${ofApp(q, param)('ms.')} AND ${within.where}
     ORDER BY ${within.oldestFirst} LIMIT 1`;
}

/** The apps of a stored name in the window: among its first `rowsPerName` rollup rows and the log's. */
function appsOfNameSql(q: MetricNameQuery, param: Param): string {
  const name = param(q.name);
  const to = param(q.to);
  const rows = param(q.rowsPerName);
  return `SELECT app FROM (
      SELECT app FROM (SELECT app FROM ${H1} WHERE name = ${name}
                         AND bucket >= ${param(floorTo(q.from, HOUR_MS))} AND bucket < ${to} LIMIT ${rows}) r
      UNION
      SELECT app FROM (SELECT app FROM ${LOG} WHERE name = ${name}
                         AND bucket >= ${param(floorTo(q.from, MINUTE_MS))} AND bucket < ${to} LIMIT ${rows}) l
    ) a ORDER BY app LIMIT ${param(q.appsPerName + 1)}`;
}

/** `Storage.queryMetricName` on an adapter's runner. */
export async function queryMetricNameWith(
  run: ReadRunner,
  q: MetricNameQuery,
  d: ActivityDialect = ROW_SAMPLES_DIALECT,
): Promise<StoredMetricName | null> {
  const [at] = await run.rows<{ hour: number | string | null; minute: number | string | null }>((param) =>
    newestSql(q, param),
  );
  const newestBucket = newest(numberOrNull(at?.hour ?? null), numberOrNull(at?.minute ?? null));
  if (newestBucket === null) return null;
  const [shape] = await run.rows<{ kind: 'sample' | 'summary' }>((param) =>
    kindSql(q, newestBucket, param, d),
  );
  if (q.app !== undefined)
    return { name: q.name, kind: shape?.kind ?? null, apps: [q.app], appsCapped: false };
  const apps = (await run.rows<{ app: string }>((param) => appsOfNameSql(q, param))).map((r) => r.app);
  const capped = apps.length > q.appsPerName;
  return {
    name: q.name,
    kind: shape?.kind ?? null,
    apps: capped ? apps.slice(0, q.appsPerName) : apps,
    appsCapped: capped,
  };
}

/** `Storage.queryMetricNames` on an adapter's runner. */
export async function queryMetricNamesWith(
  run: ReadRunner,
  q: MetricNamesQuery,
  d: ActivityDialect = ROW_SAMPLES_DIALECT,
): Promise<MetricNamesPage> {
  const page = pageOf(await run.rows<PageRow>((param) => metricNamesSql(q, param)), q.limit);
  const names: StoredMetricName[] = [];
  for (const row of page.rows) {
    const named = await queryMetricNameWith(run, { ...q, name: row.name as string }, d);
    if (named !== null) names.push(named);
  }
  return { names, next: page.next };
}
