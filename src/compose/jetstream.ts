import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type { Clock } from '../clock';
import type { Config } from '../config/load';
import type { Readiness } from '../lifecycle/readiness';
import { retryUntil } from '../lifecycle/startup';
import type { Logger } from '../log/logger';
import type { QueueMetrics } from '../metrics/queue-instruments';
import { JetStreamMonitor } from '../queue/jetstream-monitor';
import { connectNats } from '../queue/nats-connection';
import type { QueueConfig } from '../queue/queue-config';

export interface JetStreamParts {
  readonly nc: NatsConnection;
  readonly jsm: JetStreamManager;
  /** Started; drives `readiness` and the queue metrics. */
  readonly monitor: JetStreamMonitor;
}

/**
 * Tier 4 start-up shared by ingest collectors and workers: connect to NATS and make the stream
 * (`ensure`: its streams, and a worker's consumers too), each retried while NATS comes up, then
 * start the background check that drives readiness.
 */
export async function startJetStream(
  config: Config,
  queue: QueueConfig,
  o: {
    /** Connection name seen by the NATS server (`sluice-collector`, `sluice-worker`). */
    readonly name: string;
    /** Creates or updates what this process needs; also run by the monitor when it finds them gone. */
    readonly ensure: (jsm: JetStreamManager) => Promise<void>;
    /** Workers watch their consumers too. */
    readonly watchConsumers: boolean;
    readonly readiness: Readiness;
    readonly metrics: QueueMetrics;
    readonly clock: Clock;
    readonly logger: Logger;
  },
): Promise<JetStreamParts> {
  const { logger } = o;
  const startupMs = config.storageTimeoutMs * 6;
  const nc = await retryUntil(
    'connect to NATS',
    () =>
      connectNats({
        servers: queue.servers,
        name: o.name,
        timeoutMs: config.natsPublishTimeoutMs,
        logger: logger.child({ component: 'nats' }),
      }),
    startupMs,
    logger,
  );
  const jsm = await jetstreamManager(nc, { timeout: config.natsPublishTimeoutMs });
  const ensure = () => o.ensure(jsm);
  await retryUntil('create the stream', ensure, startupMs, logger);
  const monitor = new JetStreamMonitor({
    nc,
    jsm,
    topology: queue.topology,
    watchConsumers: o.watchConsumers,
    recreate: ensure,
    onChange: (up) => o.readiness.setDependencyUp(up),
    intervalMs: config.healthIntervalMs,
    timeoutMs: config.natsPublishTimeoutMs,
    clock: o.clock,
    metrics: o.metrics,
    logger: logger.child({ component: 'jetstream' }),
  });
  await monitor.start();
  return { nc, jsm, monitor };
}
