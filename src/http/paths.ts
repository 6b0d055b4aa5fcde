/**
 * The collector's paths, matched exactly and case-sensitively by every path-based decision (the
 * Express router with strict, case-sensitive routing, and the overload gate): `/V1/EVENTS` and
 * `/v1/events/` do not exist.
 */
export const PATHS = {
  events: '/v1/events',
  metrics: '/v1/metrics',
  metricNames: '/v1/metrics/names',
  apps: '/v1/apps',
  errorGroups: '/v1/error-groups',
  /** The loss map of one app (docs/http-api.md). */
  outcomes: '/v1/outcomes',
  /** This collector's pipeline state (JSON): per process, so private like `/metrics`. */
  pipeline: '/pipeline',
  /** The web console's page; its files are under `/console/`. */
  console: '/',
  livez: '/livez',
  readyz: '/readyz',
  prometheus: '/metrics',
} as const;

/** The path of a request target, without its query string (no decoding: `%2F` is not `/`). */
export function pathOf(url: string | undefined): string {
  const target = url ?? '';
  const q = target.indexOf('?');
  return q === -1 ? target : target.slice(0, q);
}
