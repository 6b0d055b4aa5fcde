/**
 * Assembly of one `sluice worker` from a validated config: part of the composition root (the CLI
 * calls it). A worker drains the JetStream stream that ingest-mode collectors publish to into
 * PostgreSQL; any number of them share the durable consumers.
 */
import express from 'express';
import { systemClock, type Clock } from '../clock';
import { exitOnConfigError, startJetStream } from './jetstream';
import { startJobs } from './scheduler';
import { openStorage, prepareStorage } from './storage';
import { startOutcomeRecorder } from './outcomes';
import type { Config } from '../config/load';
import { livez, metricsText, readyz } from '../http/routes/operations';
import { listen } from '../http/server';
import { Readiness, StorageHealthMonitor } from '../lifecycle/readiness';
import { Shutdown } from '../lifecycle/shutdown';
import type { Logger } from '../log/logger';
import { createMetrics, presetWriterSeries, type Metrics } from '../metrics/instruments';
import { createQueueMetrics } from '../metrics/queue-instruments';
import { createStorageUpGauge } from '../metrics/storage-instruments';
import { jetstream } from '@nats-io/jetstream';
import { DEFAULT_BACKOFF } from '../writer/backoff';
import { queueConfig } from '../jetstream/queue-config';
import { DEAD_LETTER_REASONS } from '../jetstream/dead-letter';
import { QueueWorker } from '../jetstream/queue-worker';
import { ensureConsumers, ensureStreams } from '../jetstream/topology';

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
  await prepareStorage(config, storage, logger);

  const recorder = startOutcomeRecorder(config, storage, metrics.registry, clock, logger);
  // A worker is the writer of tier 4: sluice_storage_up says whether it can write, as a
  // collector's does in tiers 1–3. Its readiness follows JetStream (what it pulls from).
  const health = new StorageHealthMonitor({
    ping: () => storage.ping(),
    gauge: createStorageUpGauge(metrics.registry),
    intervalMs: config.healthIntervalMs,
    timeoutMs: config.storageTimeoutMs,
    logger: logger.child({ component: 'health' }),
  });
  await health.start();
  // Like presetWriterSeries: an alert reads dead letters with increase().
  presetWriterSeries(metrics, { dropsRows: false });
  for (const reason of DEAD_LETTER_REASONS) queueMetrics.deadLetters.inc({ reason }, 0);

  const readiness = new Readiness(metrics, 'jetstream');
  const exit = deps.exit ?? ((code: number) => process.exit(code));
  let worker: QueueWorker | null = null;
  // The link comes up in the background: /livez answers at once, /readyz 503 until the stream and
  // consumers are usable; the worker pulls from then on.
  const link = startJetStream(config, queue, {
    name: 'sluice-worker',
    ensure: async (jsm) => {
      const reports = await ensureStreams(jsm, queue.topology, queue.streamLimits);
      await ensureConsumers(jsm, queue.topology, queue.consumerLimits);
      return reports;
    },
    watchConsumers: true,
    onReady: ({ nc }) => {
      if (readiness.draining) return;
      worker = new QueueWorker({
        nc,
        js: jetstream(nc, { timeout: config.natsPublishTimeoutMs }),
        topology: queue.topology,
        storage,
        batchSize: config.workerBatchSize,
        concurrency: config.writeConcurrency,
        fetchExpiresMs: config.workerFetchExpiresMs,
        requestTimeoutMs: config.natsPublishTimeoutMs,
        ackWaitMs: config.workerAckWaitMs,
        maxDeliveries: config.workerMaxDeliveries,
        maxAgeMs: config.natsMaxAgeMs,
        clock,
        backoff: DEFAULT_BACKOFF,
        health,
        metrics,
        queueMetrics,
        logger: logger.child({ component: 'worker' }),
        ...(recorder === null ? {} : { outcomes: (c) => recorder.count(c) }),
      });
      worker.start();
    },
    onFatal: exitOnConfigError(logger, exit),
    readiness,
    metrics: queueMetrics,
    clock,
    logger,
  });

  // In tier 4 the workers are the writers: they run the jobs (each once per interval cluster-wide).
  const jobs = startJobs(config, storage, clock, logger, metrics);

  const app = express();
  app.disable('x-powered-by');
  app.get('/livez', livez());
  app.get('/readyz', readyz(readiness));
  app.get('/metrics', metricsText(metrics.registry));
  const { server, port, url } = await listen(app, config, config.workerPort, {
    variable: 'SLUICE_WORKER_PORT',
  });

  const shutdown = new Shutdown({
    readiness,
    servers: [server],
    // "Flushing" a worker: the batch in hand is written and acked; nothing more is fetched.
    flusher: {
      stop: async () => worker?.stop(),
      abort: () => worker?.abort(),
      held: () => worker?.held() ?? 0,
      // Nothing a worker holds is lost when it stops: messages it did not ack are delivered again
      // (after the ack wait) to a worker, and rows it already committed are skipped by the dedupe.
      dropHeld: () => 0,
    },
    ...(recorder === null ? {} : { lossMap: recorder }),
    closers: [
      { name: 'health', close: () => health.stop() },
      ...jobs,
      // Stops the bring-up or the monitor, then drains: every ack sent reaches the server first.
      { name: 'jetstream', close: () => link.close() },
      // Dead letters of the last batches are counted by now.
      { name: 'loss map', close: () => recorder?.stop() },
      { name: 'storage', close: () => storage.close() },
    ],
    // No load balancer sends work to a worker: nothing to wait for before stopping.
    drainDelayMs: 0,
    graceMs: config.shutdownGraceMs,
    timeoutMs: config.shutdownTimeoutMs,
    logger,
    exit,
  });
  logger.info(
    { url, stream: queue.topology.stream, batchSize: config.workerBatchSize },
    'sluice worker running',
  );
  return {
    url,
    port,
    metrics,
    shutdown: (reason) => shutdown.trigger(reason),
  };
}
