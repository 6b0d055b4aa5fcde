/**
 * Assembly of one `sluice worker` from a validated config: part of the composition root (the CLI
 * calls it). A worker drains the JetStream stream that ingest-mode collectors publish to into
 * PostgreSQL; any number of them share the durable consumers.
 */
import type { Server } from 'node:http';
import express from 'express';
import { systemClock, type Clock } from '../clock';
import { openStorage } from './storage';
import type { Config } from '../config/load';
import { livez, metricsText, readyz } from '../http/routes/operations';
import { listen } from '../http/server';
import { PeriodicTask } from '../lifecycle/periodic-task';
import { Readiness } from '../lifecycle/readiness';
import { Shutdown } from '../lifecycle/shutdown';
import { retryUntil } from '../lifecycle/startup';
import type { Logger } from '../log/logger';
import { createMetrics, type Metrics } from '../metrics/instruments';
import { createQueueMetrics } from '../metrics/queue-instruments';
import { DEFAULT_BACKOFF } from '../pipeline/backoff';
import { JetStreamMonitor } from '../queue/jetstream-monitor';
import { connectNats } from '../queue/nats-connection';
import { queueConfig } from '../queue/queue-config';
import { QueueWorker } from '../queue/queue-worker';
import { ensureConsumers, ensureStreams } from '../queue/topology';

export interface WorkerDeps {
  readonly logger: Logger;
  /** Default: the system clock. */
  readonly clock?: Clock;
  /** Called when shutdown ends (0: clean, 1: forced). Default: `process.exit`. */
  readonly exit?: (code: number) => void;
}

/** A running worker. */
export interface RunningWorker {
  /** Of its /livez, /readyz and /metrics. */
  readonly url: string;
  readonly port: number;
  readonly metrics: Metrics;
  /** SIGTERM: finishes the batch in hand (written, acked), closes, exits 0. A second call forces exit. */
  shutdown(reason: string): void;
}

export async function startWorker(config: Config, deps: WorkerDeps): Promise<RunningWorker> {
  const { logger } = deps;
  const clock = deps.clock ?? systemClock;
  const queue = queueConfig(config, 'worker');
  const metrics = createMetrics();
  const queueMetrics = createQueueMetrics(metrics.registry);
  const storage = openStorage(config, logger, clock, metrics.registry);
  const startupMs = config.storageTimeoutMs * 6;
  await retryUntil('migrate', () => storage.migrate(), startupMs, logger);

  const nc = await retryUntil(
    'connect to NATS',
    () =>
      connectNats({
        servers: queue.servers,
        name: 'sluice-worker',
        timeoutMs: config.natsPublishTimeoutMs,
        logger: logger.child({ component: 'nats' }),
      }),
    startupMs,
    logger,
  );
  const jsm = await nc.jetstreamManager({ timeout: config.natsPublishTimeoutMs });
  const js = nc.jetstream({ timeout: config.natsPublishTimeoutMs });
  const ensure = async (): Promise<void> => {
    await ensureStreams(jsm, queue.topology, queue.streamLimits);
    await ensureConsumers(jsm, queue.topology, queue.consumerLimits);
  };
  await retryUntil('create stream and consumers', ensure, startupMs, logger);

  const readiness = new Readiness(metrics);
  const monitor = new JetStreamMonitor({
    nc,
    jsm,
    topology: queue.topology,
    watchConsumers: true,
    recreate: ensure,
    onChange: (up) => readiness.setStorageUp(up),
    intervalMs: config.healthIntervalMs,
    timeoutMs: config.natsPublishTimeoutMs,
    clock,
    metrics: queueMetrics,
    logger: logger.child({ component: 'jetstream' }),
  });
  await monitor.start();

  const worker = new QueueWorker({
    js,
    nc,
    topology: queue.topology,
    storage,
    batchSize: config.workerBatchSize,
    fetchExpiresMs: config.workerFetchExpiresMs,
    requestTimeoutMs: config.natsPublishTimeoutMs,
    ackWaitMs: config.workerAckWaitMs,
    maxDeliveries: config.workerMaxDeliveries,
    backoff: DEFAULT_BACKOFF,
    metrics,
    queueMetrics,
    logger: logger.child({ component: 'worker' }),
  });
  worker.start();

  // Writers keep the partitions ahead of today; in tier 4 the workers are the writers.
  const maintenance =
    'ensurePartitions' in storage
      ? new PeriodicTask('partitions', 3_600_000, () => storage.ensurePartitions(), logger)
      : null;
  maintenance?.start();

  const app = express();
  app.disable('x-powered-by');
  app.get('/livez', livez());
  app.get('/readyz', readyz(readiness));
  app.get('/metrics', metricsText(metrics.registry));
  const server: Server = await listen(app, {
    host: config.host,
    port: config.workerPort,
    keepAliveTimeoutMs: config.keepAliveTimeoutMs,
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.workerPort;

  const shutdown = new Shutdown({
    readiness,
    server,
    // "Flushing" a worker: the batch in hand is written and acked; nothing more is fetched.
    writer: worker,
    closers: [
      { name: 'jetstream monitor', close: () => monitor.stop() },
      ...(maintenance ? [{ name: 'partitions', close: () => maintenance.close() }] : []),
      // drain: every ack sent has reached the server before the connection closes.
      { name: 'nats', close: () => nc.drain() },
      { name: 'storage', close: () => storage.close() },
    ],
    // No load balancer sends work to a worker: nothing to wait for before stopping.
    drainDelayMs: 0,
    timeoutMs: config.shutdownTimeoutMs,
    logger,
    exit: deps.exit ?? ((code) => process.exit(code)),
  });
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  logger.info(
    { url: `http://${host}:${port}`, stream: queue.topology.stream, batchSize: config.workerBatchSize },
    'sluice worker running',
  );
  return {
    url: `http://${host}:${port}`,
    port,
    metrics,
    shutdown: (reason) => shutdown.trigger(reason),
  };
}
