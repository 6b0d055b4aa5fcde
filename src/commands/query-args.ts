import { parseFlags, UsageError, type FlagKind } from '../config/flags';
import {
  DEFAULT_READ_URL,
  READ_TARGET_FLAGS_HELP,
  READ_TOKEN_VARIABLE,
  type ReadTarget,
} from './read-target';

/** The read routes `sluice query` runs, and the answer's field holding the rows. */
export const QUERY_ROUTES = {
  events: { path: '/v1/events', rows: 'events' },
  metrics: { path: '/v1/metrics', rows: 'points' },
  apps: { path: '/v1/apps', rows: 'apps' },
  'metric-names': { path: '/v1/metrics/names', rows: 'names' },
  'error-groups': { path: '/v1/error-groups', rows: 'groups' },
} as const;

export type QueryRoute = keyof typeof QUERY_ROUTES;

export const QUERY_USAGE = `Usage: sluice query <what> [--parameter value ...] [--all] [--json] [--url URL] [--token TOKEN]

Runs the read API (docs/http-api.md) and prints the answer as a table, or as the API's JSON.
<what> and its route:
  events         GET /v1/events         --app --type --name --env --version --text --from --to
                                        --limit --cursor; --attr KEY=VALUE (repeatable)
  metrics        GET /v1/metrics        --name (required) --app --from --to --resolution raw|1m|1h
                                        --limit --cursor
  apps           GET /v1/apps           --prefix --from --to --limit --cursor
  metric-names   GET /v1/metrics/names  --app --prefix --from --to --limit --cursor
  error-groups   GET /v1/error-groups   --app --env --version --from --to
Each --parameter is the route's query parameter of that name; times are milliseconds since the
epoch or ISO 8601 (2026-12-02, 2026-12-02T12:00:00Z). The collector checks them and names a bad
one.

  --all                follow next_cursor until the last page (events, metrics, apps, metric-names)
  --json               print the answer as JSON (with --all: the rows of every page)
${READ_TARGET_FLAGS_HELP}

Example: sluice query events --app web-shop --type error --from 2026-12-02 --limit 20
`;

const SPEC: Record<string, FlagKind> = {
  all: 'switch',
  json: 'switch',
  url: 'value',
  token: 'value',
  attr: 'list',
};

export interface QueryArgs {
  readonly route: QueryRoute;
  readonly target: ReadTarget;
  readonly params: URLSearchParams;
  readonly all: boolean;
  readonly json: boolean;
}

export function parseQueryArgs(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): QueryArgs {
  const [what, ...rest] = args;
  if (what === undefined || what.startsWith('--'))
    throw new UsageError('say what to query: events, metrics, …');
  if (!Object.hasOwn(QUERY_ROUTES, what)) {
    throw new UsageError(`cannot query "${what}": one of ${Object.keys(QUERY_ROUTES).join(', ')}`);
  }
  const f = parseFlags(rest, SPEC, true);
  const params = new URLSearchParams();
  for (let i = 0; i < f.rest.length; i++) {
    const arg = f.rest[i] ?? '';
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq >= 0 ? eq : undefined);
    const value = eq >= 0 ? arg.slice(eq + 1) : f.rest[++i];
    if (name === '' || value === undefined) throw new UsageError(`--${name} needs a value`);
    params.append(name, value);
  }
  for (const pair of f.lists.get('attr') ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--attr needs KEY=VALUE (got "${pair}")`);
    params.append(`attr.${pair.slice(0, eq)}`, pair.slice(eq + 1));
  }
  return {
    route: what as QueryRoute,
    target: {
      url: f.values.get('url') ?? DEFAULT_READ_URL,
      token: f.values.get('token') ?? env[READ_TOKEN_VARIABLE] ?? null,
    },
    params,
    all: f.switches.has('all'),
    json: f.switches.has('json'),
  };
}
