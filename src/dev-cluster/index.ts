/** `sluice cluster`: N collectors and a real HAProxy on loopback, stopped in order by Ctrl-C. */
import { CLUSTER_USAGE, parseClusterArgs } from './cluster-args';
import { ensureDatabase } from './database';
import { describeExit, type ExitStatus } from './processes';
import { startLocalCluster } from './local-cluster';

export { detectionWindowMs, drainDelayFor, recoveryWindowMs, type CheckTiming } from './check-timing';
export {
  startLocalCluster,
  type ClusterStopReport,
  type LocalCluster,
  type LocalClusterOptions,
} from './local-cluster';
export { CLUSTER_USAGE };

/** Database of `sluice cluster` when SLUICE_DATABASE_URL is unset (created if missing). */
export const DEFAULT_CLUSTER_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/sluice';
/** Redis of `sluice cluster` when SLUICE_REDIS_URL is unset. */
export const DEFAULT_CLUSTER_REDIS_URL = 'redis://127.0.0.1:6379';

/** `postgres://user:secret@host/db` → `postgres://user@host/db`, for printing. */
function withoutPassword(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    return u.toString();
  } catch {
    return '(unparsable URL)';
  }
}

/** Resolves with the name of the first signal, or rejects when HAProxy ends on its own. */
function untilStopped(haproxyExited: Promise<ExitStatus>): { done: Promise<string>; dispose(): void } {
  const handlers: Array<[NodeJS.Signals, () => void]> = [];
  const done = new Promise<string>((resolve, reject) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const handler = (): void => resolve(signal);
      handlers.push([signal, handler]);
      process.once(signal, handler);
    }
    void haproxyExited.then((s) => reject(new Error(`haproxy exited unexpectedly (${describeExit(s)})`)));
  });
  return {
    done,
    dispose: () => {
      for (const [signal, handler] of handlers) process.off(signal, handler);
    },
  };
}

/**
 * Runs the cluster until SIGINT or SIGTERM, then stops HAProxy (soft stop), drains every
 * collector, and resolves (exit 0). Children's output goes to stderr prefixed with their name;
 * stdout holds the addresses only.
 */
export async function runClusterCommand(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Promise<void> {
  const a = parseClusterArgs(args);
  const databaseUrl = env.SLUICE_DATABASE_URL || DEFAULT_CLUSTER_DATABASE_URL;
  const redisUrl = env.SLUICE_REDIS_URL || DEFAULT_CLUSTER_REDIS_URL;
  const say = (line: string): boolean => process.stdout.write(`${line}\n`);
  const note = (line: string): boolean => process.stderr.write(`sluice cluster: ${line}\n`);

  const db = await ensureDatabase(databaseUrl);
  note(
    `${db === 'created' ? 'created database' : 'database'} ${withoutPassword(databaseUrl)}; redis ${redisUrl}`,
  );
  note(`starting ${a.collectors} collectors and HAProxy`);
  let stopping = false;
  const cluster = await startLocalCluster({
    collectors: a.collectors,
    port: a.port,
    statsPort: a.statsPort,
    otlpPort: a.otlpPort,
    exporterPort: a.exporterPort,
    databaseUrl,
    redisUrl,
    env,
    onOutput: (source, line) => process.stderr.write(`[${source}] ${line}\n`),
    onCollectorExit: (name, status) => {
      if (!stopping) note(`${name} exited on its own (${describeExit(status)}); HAProxy routes around it`);
    },
  });

  say(`Sluice cluster ready: ${cluster.url}`);
  // Each collector's console (/) and GET /pipeline: on loopback only, never through HAProxy.
  for (const c of cluster.collectors) say(`  ${c.name} ${c.url} pid ${c.pid ?? '?'} console ${c.url}/`);
  say(`  haproxy otlp ${cluster.otlpUrl} pid ${cluster.haproxy.pid ?? '?'}`);
  say(
    `  haproxy stats ${cluster.statsUrl} (user ${cluster.statsCredentials.user}) metrics ${cluster.haproxyMetricsUrl}`,
  );
  say('Ctrl-C stops every process (HAProxy first, then each collector drains).');

  const wait = untilStopped(cluster.haproxy.exited);
  let failure: unknown = null;
  const reason = await wait.done.catch((err: unknown) => {
    failure = err;
    return 'haproxy exit';
  });
  wait.dispose();
  stopping = true;
  note(`${reason}: stopping (a second Ctrl-C kills everything at once)`);
  const force = (): void => {
    note('second signal: killing every process');
    for (const c of cluster.collectors) void c.kill();
    void cluster.haproxy.kill();
  };
  process.once('SIGINT', force);
  process.once('SIGTERM', force);
  try {
    const report = await cluster.stop();
    note(`haproxy ${describeExit(report.haproxy)}`);
    for (const [name, status] of Object.entries(report.collectors)) note(`${name} ${describeExit(status)}`);
    note('stopped');
  } finally {
    process.off('SIGINT', force);
    process.off('SIGTERM', force);
  }
  if (failure !== null) throw failure;
}
