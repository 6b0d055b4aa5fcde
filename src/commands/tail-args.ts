import { duration } from '../config/parsers';
import { parseFlags, UsageError, type FlagKind } from '../config/flags';
import {
  DEFAULT_READ_URL,
  READ_TARGET_FLAGS_HELP,
  READ_TOKEN_VARIABLE,
  type ReadTarget,
} from './read-target';

export const TAIL_USAGE = `Usage: sluice tail --app APP [filters] [--since 1m] [--json] [--url URL] [--token TOKEN]

Follows the new events of an app, as they are stored, through the read API (GET /v1/events with
its cursor), oldest first, until Ctrl-C. Events are shown by their ts: one stored late (an SDK
offline for longer than --lateness) may be left out.

  --app APP            the app (required)
  --type TYPE          error, lifecycle, metric or log
  --name NAME          event name
  --env ENV            source.env
  --version VERSION    source.version
  --attr KEY=VALUE     an attribute equals VALUE (repeat for more, up to 4)
  --text TEXT          a substring of the message or error message
  --since DURATION     start with the events of this long before now (default 1m; 0: new only)
  --interval DURATION  time between two reads (default 1s)
  --lateness DURATION  how far behind the newest one an event may arrive and still be shown
                       (default 30s)
  --json               one JSON event per line instead of a line of text
${READ_TARGET_FLAGS_HELP}
`;

const SPEC: Record<string, FlagKind> = {
  app: 'value',
  type: 'value',
  name: 'value',
  env: 'value',
  version: 'value',
  attr: 'list',
  text: 'value',
  since: 'value',
  interval: 'value',
  lateness: 'value',
  json: 'switch',
  url: 'value',
  token: 'value',
};

export interface TailArgs {
  readonly target: ReadTarget;
  /** Query parameters of GET /v1/events other than from, to, limit and cursor. */
  readonly filters: URLSearchParams;
  /** Milliseconds. */
  readonly sinceMs: number;
  readonly intervalMs: number;
  readonly latenessMs: number;
  readonly json: boolean;
}

function durationFlag(flag: string, raw: string | undefined, fallback: string, min: number): number {
  try {
    return duration(min, 7 * 86_400_000, 's')(raw ?? fallback);
  } catch (err) {
    throw new UsageError(`--${flag} ${(err as Error).message}`);
  }
}

export function parseTailArgs(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): TailArgs {
  const f = parseFlags(args, SPEC);
  if (f.positional.length > 0) throw new UsageError(`unexpected argument "${f.positional[0]}"`);
  const app = f.values.get('app');
  if (app === undefined || app === '') throw new UsageError('--app is required');
  const filters = new URLSearchParams({ app });
  for (const key of ['type', 'name', 'env', 'version', 'text']) {
    const v = f.values.get(key);
    if (v !== undefined) filters.set(key, v);
  }
  for (const pair of f.lists.get('attr') ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--attr needs KEY=VALUE (got "${pair}")`);
    filters.append(`attr.${pair.slice(0, eq)}`, pair.slice(eq + 1));
  }
  return {
    target: {
      url: f.values.get('url') ?? DEFAULT_READ_URL,
      token: f.values.get('token') ?? env[READ_TOKEN_VARIABLE] ?? null,
    },
    filters,
    sinceMs: durationFlag('since', f.values.get('since'), '1m', 0),
    intervalMs: durationFlag('interval', f.values.get('interval'), '1s', 50),
    latenessMs: durationFlag('lateness', f.values.get('lateness'), '30s', 0),
    json: f.switches.has('json'),
  };
}
