import { drainDelayFor, type CheckTiming } from '../../../src/dev-cluster/check-timing';
import { startLocalCluster, type LocalCluster } from '../../../src/dev-cluster/local-cluster';
import { createTestDatabase, type TestDatabase } from '../../support/postgres';

/**
 * Check timing of the cluster tests: haproxy.cfg's shape with shorter values. The collectors'
 * drain delay comes from the same formula as haproxy.cfg's (`drainDelayFor`): 250 + (2 - 1) x 100
 * + 500 = 850 ms window, 1350 ms drain. `timeout check` stays generous: on a busy 2-core box a
 * collector may answer /readyz late, and three collectors marked DOWN at once would fail requests.
 */
export const TEST_TIMING: CheckTiming = {
  interMs: 250,
  fastinterMs: 100,
  downinterMs: 250,
  fall: 2,
  rise: 2,
  timeoutCheckMs: 500,
};

/** Slack allowed over a computed window for timers on a busy box (milliseconds). */
export const SCHEDULING_SLACK_MS = 1000;

export interface TestCluster {
  readonly cluster: LocalCluster;
  readonly db: TestDatabase;
  /** Stops every process, then drops the database. Idempotent. */
  close(): Promise<void>;
  /** Every child's last lines, for failure messages. */
  output(): string;
}

export interface TestClusterOptions {
  readonly collectors?: number;
  /** `SLUICE_*` over the test defaults. */
  readonly env?: Readonly<Record<string, string>>;
  readonly httpKeepAliveMs?: number;
}

/** Three collectors (own database) behind a real HAProxy with `TEST_TIMING`, on free ports. */
export async function startTestCluster(label: string, o: TestClusterOptions = {}): Promise<TestCluster> {
  const db = await createTestDatabase(label);
  const lines: string[] = [];
  let cluster: LocalCluster;
  try {
    cluster = await startLocalCluster({
      collectors: o.collectors ?? 3,
      port: 0,
      statsPort: 0,
      databaseUrl: db.url,
      redisUrl: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
      collectorEnv: {
        SLUICE_LOG_LEVEL: 'warn',
        SLUICE_DRAIN_DELAY_MS: String(drainDelayFor(TEST_TIMING)),
        SLUICE_HEALTH_INTERVAL_MS: '200',
        SLUICE_SHUTDOWN_TIMEOUT_MS: '15000',
        // Throughput tests, not limit tests: a single test app would hit the default 100 events/s.
        SLUICE_RATE_LIMIT: '0',
        // Nor shedding tests: jest workers share two cores with the cluster (see test/support/in-process.ts).
        SLUICE_SHED_LAG_MS: '0',
        ...o.env,
      },
      timing: TEST_TIMING,
      ...(o.httpKeepAliveMs !== undefined && { httpKeepAliveMs: o.httpKeepAliveMs }),
      onOutput: (source, line) => {
        lines.push(`[${source}] ${line}`);
        if (lines.length > 400) lines.shift();
      },
    });
  } catch (err) {
    await db.drop().catch(() => undefined);
    throw err;
  }
  let closing: Promise<void> | null = null;
  return {
    cluster,
    db,
    output: () => lines.join('\n'),
    close() {
      closing ??= cluster
        .stop()
        .then(() => db.drop())
        .then(() => undefined);
      return closing;
    },
  };
}
