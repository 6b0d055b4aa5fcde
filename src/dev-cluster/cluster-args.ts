import { parseFlags, UsageError, type ParsedFlags } from '../config/flags';
import { MAX_COLLECTORS } from './local-cluster';

/** Options of `sluice cluster`. */
export interface ClusterArgs {
  /** `--collectors N`: collectors behind HAProxy. Default 3. */
  readonly collectors: number;
  /** `--port P`: HAProxy's ingest port on 127.0.0.1. Default 8080. */
  readonly port: number;
  /** `--stats-port P`: HAProxy's stats page (credentials SLUICE_STATS_USER / _PASSWORD). Default 8404. */
  readonly statsPort: number;
  /** `--otlp-port P`: HAProxy's OTLP/HTTP port, forwarded to the collectors' SLUICE_OTLP_PORT. Default 4318. */
  readonly otlpPort: number;
  /** `--exporter-port P`: HAProxy's Prometheus exporter. Default 8405. */
  readonly exporterPort: number;
}

export const CLUSTER_USAGE = `Usage: sluice cluster [--collectors N] [--port P] [--otlp-port P] [--stats-port P] [--exporter-port P]

Starts N collectors on loopback ports and a real HAProxy in front of them, with haproxy.cfg
rendered for loopback (same checks, timeouts and rules, only addresses differ). Ctrl-C drains and
stops everything (docs/cluster.md).

  --collectors N       collectors behind HAProxy (default 3, at most 20)
  --port P             the API on 127.0.0.1:P (default 8080, /v1/... only)
  --otlp-port P        OTLP/HTTP (default 4318)
  --stats-port P       HAProxy's stats page (default 8404; user and password SLUICE_STATS_USER
                       and SLUICE_STATS_PASSWORD, default admin and admin)
  --exporter-port P    HAProxy's Prometheus exporter (default 8405)

PostgreSQL: SLUICE_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/sluice, created if
missing); Redis: SLUICE_REDIS_URL (default redis://127.0.0.1:6379). Other SLUICE_* variables
configure every collector (sluice help serve).
`;

/** Thrown for a bad flag or value; the message says which. */
export class ClusterArgsError extends Error {
  override readonly name = 'ClusterArgsError';
}

function integerIn(flag: string, raw: string | undefined, min: number, max: number): number {
  const n = Number(raw);
  if (raw === undefined || raw === '' || !Number.isInteger(n) || n < min || n > max) {
    throw new ClusterArgsError(
      `${flag} needs an integer from ${min} to ${max} (got ${JSON.stringify(raw ?? '')})`,
    );
  }
  return n;
}

/** Parses `--flag value` and `--flag=value`; unknown flags are an error, as for `sluice serve`. */
export function parseClusterArgs(args: readonly string[]): ClusterArgs {
  let flags: ParsedFlags;
  try {
    flags = parseFlags(args, {
      collectors: 'value',
      port: 'value',
      'stats-port': 'value',
      'otlp-port': 'value',
      'exporter-port': 'value',
    });
  } catch (err) {
    if (err instanceof UsageError) throw new ClusterArgsError(`${err.message}\n\n${CLUSTER_USAGE}`);
    throw err;
  }
  const extra = flags.positional[0];
  if (extra !== undefined) throw new ClusterArgsError(`unknown option "${extra}"\n\n${CLUSTER_USAGE}`);
  const given = (name: string, min: number, max: number, fallback: number): number => {
    const raw = flags.values.get(name);
    return raw === undefined ? fallback : integerIn(`--${name}`, raw, min, max);
  };
  return {
    collectors: given('collectors', 1, MAX_COLLECTORS, 3),
    port: given('port', 0, 65535, 8080),
    statsPort: given('stats-port', 0, 65535, 8404),
    otlpPort: given('otlp-port', 0, 65535, 4318),
    exporterPort: given('exporter-port', 0, 65535, 8405),
  };
}
