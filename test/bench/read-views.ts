/**
 * What the `reads` suite times: every read route of the API (docs/http-api.md, "Read API") with
 * the filters the console's views send, each over a window of the data set ending at its end (so
 * a rerun on a kept data set reads the same rows, and the ingest the suite measures alongside,
 * written at the time of the run, is outside every window).
 */

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export interface ReadView {
  /** What the console or a client shows with it, e.g. `events of an app, 24 h`. */
  readonly name: string;
  /** Path and query string, e.g. `/v1/events?app=app-3&from=…&to=…`. */
  readonly path: string;
}

/** A metric every app of the bench's mix writes (workload.ts). */
const METRIC = 'http.server.duration';

function query(params: Readonly<Record<string, string | number>>): string {
  return new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();
}

/**
 * The views over a data set of `apps` apps (`app-0` …) that ends at `endMs` and spans `days`
 * days. `app` is the app the per-app views read.
 */
export function readViews(endMs: number, days: number, app = 'app-3'): ReadView[] {
  const last = (ms: number): { from: number; to: number } => ({ from: endMs - ms, to: endMs });
  const h1 = last(HOUR_MS);
  const h24 = last(DAY_MS);
  const all = last(days * DAY_MS);
  const events = (p: Readonly<Record<string, string | number>>): string => `/v1/events?${query(p)}`;
  const chart = (resolution: string, w: { from: number; to: number }): string =>
    `/v1/metrics?${query({ name: METRIC, app, resolution, ...w })}`;
  return [
    { name: 'events page, every app, 24 h', path: events(h24) },
    { name: 'events of an app, 24 h', path: events({ app, ...h24 }) },
    { name: 'events of an app, 7 d', path: events({ app, ...all }) },
    { name: 'events of an app, type=error', path: events({ app, type: 'error', ...h24 }) },
    { name: 'events of an app, type=metric', path: events({ app, type: 'metric', ...h24 }) },
    { name: 'events, name=checkout.failed', path: events({ name: 'checkout.failed', ...h24 }) },
    { name: 'events of an app, env=staging', path: events({ app, env: 'staging', ...h24 }) },
    { name: 'events of an app, version=2.0.0-rc.1', path: events({ app, version: '2.0.0-rc.1', ...h24 }) },
    {
      name: 'events of an app, attr.route=/checkout',
      path: events({ app, 'attr.route': '/checkout', ...h24 }),
    },
    { name: 'events of an app, attr.status=503', path: events({ app, 'attr.status': 503, ...h24 }) },
    { name: 'events of an app, text (common: "timeout")', path: events({ app, text: 'timeout', ...h24 }) },
    {
      name: 'events of an app, text (rare: "user 4242 ")',
      path: events({ app, text: 'user 4242 ', ...h24 }),
    },
    { name: 'events, text (rare), every app, 7 d', path: events({ text: 'user 4242 ', ...all }) },
    {
      name: 'events of an app, type, env and text',
      path: events({ app, type: 'error', env: 'prod', text: 'declined', ...h24 }),
    },
    { name: 'error groups, 1 h', path: `/v1/error-groups?${query(h1)}` },
    { name: 'error groups, 24 h', path: `/v1/error-groups?${query(h24)}` },
    { name: 'error groups, 7 d', path: `/v1/error-groups?${query(all)}` },
    { name: 'error groups of an app, 24 h', path: `/v1/error-groups?${query({ app, ...h24 })}` },
    { name: 'metric chart, raw over 1 h', path: chart('raw', h1) },
    { name: 'metric chart, 1m over 24 h', path: chart('1m', h24) },
    { name: 'metric chart, 1h over 7 d', path: chart('1h', all) },
    {
      name: 'loss map of an app, 1 h by minute',
      path: `/v1/outcomes?${query({ app, by: 'minute', ...h1 })}`,
    },
    { name: 'loss map of an app, 7 d', path: `/v1/outcomes?${query({ app, ...all })}` },
    { name: 'apps, 24 h', path: `/v1/apps?${query(h24)}` },
    { name: 'apps, 7 d', path: `/v1/apps?${query(all)}` },
    { name: 'metric names, 24 h', path: `/v1/metrics/names?${query(h24)}` },
    { name: 'metric names of an app, 7 d', path: `/v1/metrics/names?${query({ app, ...all })}` },
  ];
}
