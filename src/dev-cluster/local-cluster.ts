/**
 * The tier-3 topology as local processes: N collectors (`sluice serve`) on loopback ports, a real
 * HAProxy in front with a config derived from haproxy.cfg. Used by `sluice cluster`, the cluster
 * tests and the cluster bench.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../config/load';
import { timingProblems, type CheckTiming } from './check-timing';
import { CollectorNode } from './collector-node';
import { requireProgram, searchFolders } from './executables';
import { freePort, portInUse } from './free-port';
import {
  COLLECTORS_BACKEND,
  deriveHaproxyConfig,
  EXPORTER_FRONTEND,
  INGEST_FRONTEND,
  OTLP_FRONTEND,
  readHaproxySettings,
  STATS_FRONTEND,
} from './haproxy-config';
import { HaproxyProcess, type ServerStats, type StatsCredentials } from './haproxy-process';
import { pollUntil } from './http-probe';
import type { ExitStatus, OutputListener } from './processes';
import { locateRepoFiles, type RepoFiles } from './repo-files';

export interface LocalClusterOptions {
  /** Collectors to start. Default 3. */
  readonly collectors?: number;
  /** HAProxy's ingest port on 127.0.0.1; 0 picks a free one. Default 8080, as in docker-compose.yml. */
  readonly port?: number;
  /** HAProxy's stats page port; 0 picks a free one. Default 8404. */
  readonly statsPort?: number;
  /** HAProxy's OTLP/HTTP port (forwarded to each collector's SLUICE_OTLP_PORT); 0 or unset picks a free one. */
  readonly otlpPort?: number;
  /** HAProxy's Prometheus exporter port; 0 or unset picks a free one. */
  readonly exporterPort?: number;
  /** PostgreSQL every collector shares (`SLUICE_DATABASE_URL`); the database must exist. */
  readonly databaseUrl: string;
  /** Redis for cluster-wide rate limits (`SLUICE_REDIS_URL`); null leaves it unset. */
  readonly redisUrl: string | null;
  /**
   * Environment the children inherit (PATH, HOME…). Its `SLUICE_*` variables configure the
   * collectors, except SLUICE_HOST, SLUICE_PORT and SLUICE_OTLP_PORT, which the runner sets per
   * collector. SLUICE_STATS_USER and SLUICE_STATS_PASSWORD are the stats page's credentials
   * (default `admin` and `admin`, for local use).
   */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** `SLUICE_*` settings of every collector, over `env`. */
  readonly collectorEnv?: Readonly<Record<string, string>>;
  /**
   * Tests only: check timing instead of haproxy.cfg's. The collectors' drain delay must still
   * cover its detection window (`drainDelayFor`), or the start is refused.
   */
  readonly timing?: CheckTiming;
  /** Tests only: HAProxy `timeout http-keep-alive` instead of haproxy.cfg's (milliseconds). */
  readonly httpKeepAliveMs?: number;
  /** Every line any child writes. Default: dropped (the last lines are kept for errors). */
  readonly onOutput?: OutputListener;
  /** Called when a collector ends on its own (a crash); HAProxy routes around it. */
  readonly onCollectorExit?: (name: string, status: ExitStatus) => void;
  /** Longest wait for each collector's `/readyz` and for HAProxy to see them UP (milliseconds). Default 30 000. */
  readonly readyTimeoutMs?: number;
  /** Where haproxy.cfg and dist/src/cli.js are. Default: this checkout. */
  readonly files?: RepoFiles;
}

/** How each process ended when the cluster stopped. */
export interface ClusterStopReport {
  readonly haproxy: ExitStatus;
  readonly collectors: Readonly<Record<string, ExitStatus>>;
}

/** A running local cluster. `stop` is idempotent. */
export interface LocalCluster {
  /** HAProxy's ingest frontend, e.g. `http://127.0.0.1:8080`. */
  readonly url: string;
  /** HAProxy's OTLP/HTTP frontend. */
  readonly otlpUrl: string;
  /** HAProxy's stats page (behind `statsCredentials`). */
  readonly statsUrl: string;
  readonly statsCredentials: StatsCredentials;
  /** HAProxy's Prometheus exporter. */
  readonly haproxyMetricsUrl: string;
  readonly collectors: readonly CollectorNode[];
  readonly haproxy: HaproxyProcess;
  /** The check timing HAProxy runs with. */
  readonly timing: CheckTiming;
  /** The collectors' `SLUICE_DRAIN_DELAY_MS`. */
  readonly drainDelayMs: number;
  /** The collectors' `SLUICE_SHUTDOWN_TIMEOUT_MS`. */
  readonly shutdownTimeoutMs: number;
  /** The collectors backend's servers as HAProxy sees them now. */
  servers(): Promise<ServerStats[]>;
  /**
   * Waits until HAProxy reports server `name` with status `status` (`UP` or `DOWN`, exactly);
   * resolves the milliseconds it took.
   */
  waitForServer(name: string, status: 'UP' | 'DOWN', timeoutMs: number): Promise<number>;
  /** HAProxy soft stop first (requests in flight finish), then every collector drains. */
  stop(): Promise<ClusterStopReport>;
}

const DEFAULT_COLLECTORS = 3;
const DEFAULT_PORT = 8080;
const DEFAULT_STATS_PORT = 8404;
/** Stats page credentials when SLUICE_STATS_USER / SLUICE_STATS_PASSWORD are unset: local use only. */
export const DEFAULT_STATS_CREDENTIALS: StatsCredentials = { user: 'admin', password: 'admin' };
/** Upper bound of `--collectors`: the number of servers haproxy.cfg's server-template makes. */
export const MAX_COLLECTORS = 20;

function collectorEnvironment(o: LocalClusterOptions, count: number): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(o.env)) if (v !== undefined) env[k] = v;
  env.SLUICE_DATABASE_URL = o.databaseUrl;
  if (o.redisUrl !== null) env.SLUICE_REDIS_URL = o.redisUrl;
  // The insurance limiter (Redis away) allows limit ÷ this per collector.
  env.SLUICE_EXPECTED_INSTANCES ??= String(count);
  Object.assign(env, o.collectorEnv);
  env.SLUICE_HOST = '127.0.0.1';
  delete env.SLUICE_PORT;
  delete env.SLUICE_OTLP_PORT;
  // HAProxy's secret, not the collectors' business.
  delete env.SLUICE_STATS_USER;
  delete env.SLUICE_STATS_PASSWORD;
  return env;
}

/** Validates the collectors' settings as each collector will, so a bad value stops us before any start. */
function collectorSettings(env: NodeJS.ProcessEnv) {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError)
      throw new Error(`invalid collector configuration: ${err.message}`, { cause: err });
    throw err;
  }
}

async function portOrFree(port: number | undefined, fallback: number): Promise<number> {
  const p = port ?? fallback;
  return p === 0 ? freePort() : p;
}

/** The port numbers haproxy.cfg's server templates use for a collector's API and OTLP ports. */
const TEMPLATE_API_PORT = 8080;
const TEMPLATE_OTLP_PORT = 4318;

/** Starts the collectors, then HAProxy; resolves once HAProxy sees every collector UP. */
export async function startLocalCluster(o: LocalClusterOptions): Promise<LocalCluster> {
  const count = o.collectors ?? DEFAULT_COLLECTORS;
  if (!Number.isInteger(count) || count < 1 || count > MAX_COLLECTORS) {
    throw new Error(`collectors must be an integer from 1 to ${MAX_COLLECTORS} (got ${count})`);
  }
  const files = o.files ?? locateRepoFiles();
  if (!existsSync(files.cli)) throw new Error(`${files.cli} is missing: run \`npm run build\` first`);
  const haproxyBinary = requireProgram('haproxy', 'haproxy', searchFolders(o.env.PATH));
  const readyTimeoutMs = o.readyTimeoutMs ?? 30_000;

  const template = await readFile(files.haproxyCfg, 'utf8');
  const fileSettings = readHaproxySettings(template);
  const timing = o.timing ?? fileSettings.timing;
  const httpKeepAliveMs = o.httpKeepAliveMs ?? fileSettings.httpKeepAliveMs;
  const env = collectorEnvironment(o, count);
  const settings = collectorSettings(env);
  const problems = timingProblems(timing, httpKeepAliveMs, settings);
  if (problems.length > 0)
    throw new Error(`collector settings do not fit haproxy.cfg:\n- ${problems.join('\n- ')}`);

  const prefix = fileSettings.serverTemplates.find((t) => t.backend === COLLECTORS_BACKEND)?.prefix;
  if (prefix === undefined)
    throw new Error(`${files.haproxyCfg} has no server-template in its collectors backend`);
  const statsCredentials: StatsCredentials = {
    user: o.env.SLUICE_STATS_USER || DEFAULT_STATS_CREDENTIALS.user,
    password: o.env.SLUICE_STATS_PASSWORD || DEFAULT_STATS_CREDENTIALS.password,
  };
  const port = await portOrFree(o.port, DEFAULT_PORT);
  const statsPort = await portOrFree(o.statsPort, DEFAULT_STATS_PORT);
  const otlpPort = await portOrFree(o.otlpPort, 0);
  const exporterPort = await portOrFree(o.exporterPort, 0);
  // HAProxy would exit on a port it cannot bind, and the wait for its stats page would report that
  // instead: say which port is taken before anything starts.
  for (const [what, flag, p] of [
    ['the API', '--port', port],
    ['the stats page', '--stats-port', statsPort],
    ['OTLP/HTTP', '--otlp-port', otlpPort],
    ['the Prometheus exporter', '--exporter-port', exporterPort],
  ] as const) {
    if (await portInUse(p)) {
      throw new Error(
        `port ${p} for ${what} (${flag}) is already in use on 127.0.0.1: stop what listens there, or choose another with ${flag}`,
      );
    }
  }
  const folder = await mkdtemp(path.join(os.tmpdir(), 'sluice-cluster-'));
  const collectors: CollectorNode[] = [];
  for (let i = 1; i <= count; i++) {
    const collectorPort = await freePort();
    const collectorOtlpPort = await freePort();
    collectors.push(
      new CollectorNode({
        name: `${prefix}${i}`,
        node: process.execPath,
        cli: files.cli,
        port: collectorPort,
        otlpPort: collectorOtlpPort,
        env: { ...env, SLUICE_PORT: String(collectorPort), SLUICE_OTLP_PORT: String(collectorOtlpPort) },
        readyTimeoutMs,
        // The drain delay, then in-flight requests and the flush, bounded by the collector's own timeout.
        stopTimeoutMs: settings.drainDelayMs + settings.shutdownTimeoutMs + 5000,
        onOutput: o.onOutput,
        onUnexpectedExit: o.onCollectorExit,
      }),
    );
  }

  let haproxy: HaproxyProcess | null = null;
  const stopAll = async (): Promise<ClusterStopReport> => {
    const haproxyStatus = haproxy ? await haproxy.stop() : { code: 0, signal: null };
    const statuses = await Promise.all(collectors.map((c) => c.stop()));
    await rm(folder, { recursive: true, force: true });
    return {
      haproxy: haproxyStatus,
      collectors: Object.fromEntries(collectors.map((c, i) => [c.name, statuses[i] as ExitStatus])),
    };
  };

  try {
    // In parallel: the first one applies the migrations under an advisory lock, the others wait.
    await Promise.all(collectors.map((c) => c.start()));
    haproxy = await HaproxyProcess.start({
      binary: haproxyBinary,
      folder,
      config: deriveHaproxyConfig(template, {
        binds: {
          [INGEST_FRONTEND]: `127.0.0.1:${port}`,
          [OTLP_FRONTEND]: `127.0.0.1:${otlpPort}`,
          [STATS_FRONTEND]: `127.0.0.1:${statsPort}`,
          [EXPORTER_FRONTEND]: `127.0.0.1:${exporterPort}`,
        },
        servers: collectors.map((c, i) => ({
          index: i + 1,
          ports: { [TEMPLATE_API_PORT]: c.port, [TEMPLATE_OTLP_PORT]: c.otlpPort },
        })),
        ...(o.timing && { timing: o.timing }),
        ...(o.httpKeepAliveMs !== undefined && { httpKeepAliveMs: o.httpKeepAliveMs }),
      }),
      statsOrigin: `http://127.0.0.1:${statsPort}`,
      statsCredentials,
      exporterOrigin: `http://127.0.0.1:${exporterPort}`,
      env: {
        ...env,
        SLUICE_STATS_USER: statsCredentials.user,
        SLUICE_STATS_PASSWORD: statsCredentials.password,
      },
      readyTimeoutMs,
      onOutput: o.onOutput,
    });
    const lb = haproxy;
    await pollUntil(
      'HAProxy to see every collector UP',
      async () => (await lb.servers()).every((s) => s.status === 'UP'),
      { timeoutMs: readyTimeoutMs, abort: () => (lb.running ? null : `haproxy exited:\n${lb.output()}`) },
    );
  } catch (err) {
    await stopAll().catch(() => undefined);
    throw err;
  }

  const lb = haproxy;
  let stopping: Promise<ClusterStopReport> | null = null;
  return {
    url: `http://127.0.0.1:${port}`,
    otlpUrl: `http://127.0.0.1:${otlpPort}`,
    statsUrl: lb.statsUrl,
    statsCredentials,
    haproxyMetricsUrl: lb.metricsUrl,
    collectors,
    haproxy: lb,
    timing,
    drainDelayMs: settings.drainDelayMs,
    shutdownTimeoutMs: settings.shutdownTimeoutMs,
    servers: () => lb.servers(),
    async waitForServer(name, status, timeoutMs) {
      const started = Date.now();
      await pollUntil(
        `HAProxy to report ${name} ${status}`,
        async () => (await lb.servers()).find((s) => s.name === name)?.status === status,
        { timeoutMs, pollMs: 20 },
      );
      return Date.now() - started;
    },
    stop() {
      stopping ??= stopAll();
      return stopping;
    },
  };
}
