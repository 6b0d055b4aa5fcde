/**
 * Assembly of one collector from a validated config: part of the composition
 * root (the CLI calls it; integration tests start collectors in-process with
 * it). Nothing else constructs components.
 */
import type { Server } from 'node:http';
import { createAdmission } from './admission';
import { systemClock, type Clock } from './clock';
import type { Config } from './config/load';
import type { EventLimits } from './events/limits';
import { createApp } from './http/app';
import { listen } from './http/server';
import { IngestService } from './ingest/ingest-service';
import { LaneSink } from './ingest/lane-sink';
import { PeriodicTask } from './lifecycle/periodic-task';
import { Readiness, StorageHealthMonitor } from './lifecycle/readiness';
import { Shutdown } from './lifecycle/shutdown';
import { retryUntil } from './lifecycle/startup';
import type { Logger } from './log/logger';
import { createMetrics, type Metrics } from './metrics/instruments';
import { DEFAULT_BACKOFF } from './pipeline/backoff';
import { BatchWriterLoop } from './pipeline/batch-writer-loop';
import { BoundedLane } from './pipeline/lane';
import type { Storage } from './storage/port';
import { createPostgresStorage, type PostgresStorage } from './storage/postgres';
import { createSqliteStorage } from './storage/sqlite';

export interface CollectorDeps {
  readonly logger: Logger;
  /** Default: the system clock. */
  readonly clock?: Clock;
  /** Called when shutdown ends (0: clean, 1: forced). Default: `process.exit`. */
  readonly exit?: (code: number) => void;
}

/** A listening collector. */
export interface RunningCollector {
  readonly url: string;
  readonly port: number;
  readonly server: Server;
  readonly metrics: Metrics;
  readonly storage: Storage;
  /** Starts the shutdown sequence (a second call forces exit). */
  shutdown(reason: string): void;
}

export function openStorage(
  config: Config,
  logger: Logger,
  clock: Clock = systemClock,
): Storage | PostgresStorage {
  if (config.databaseUrl !== null) {
    return createPostgresStorage({
      connectionString: config.databaseUrl,
      poolSize: config.poolSize,
      timeoutMs: config.storageTimeoutMs,
      partitionsAheadDays: config.partitionsAheadDays,
      retentionRawMs: config.retentionRawMs,
      writeMethod: config.pgWriteMethod,
      clock,
      logger,
    });
  }
  return createSqliteStorage({ path: config.sqlitePath, clock, logger });
}

export function eventLimits(config: Config): EventLimits {
  return {
    maxAttributes: config.maxAttributes,
    maxAttributeKeyLength: 64,
    maxStringLength: config.maxStringLength,
    maxStackLength: config.maxStackLength,
    maxNameLength: 128,
    maxSourceLength: 128,
    maxAgeMs: config.retentionRawMs,
    maxFutureMs: config.maxFutureMs,
  };
}

/** Applies migrations (retrying while the database comes up), then closes the storage. */
export async function migrateStorage(config: Config, logger: Logger): Promise<void> {
  const storage = openStorage(config, logger);
  try {
    await retryUntil('migrate', () => storage.migrate(), config.storageTimeoutMs * 6, logger);
    logger.info({ storage: storage.kind }, 'migrations applied');
  } finally {
    await storage.close();
  }
}

export async function startCollector(config: Config, deps: CollectorDeps): Promise<RunningCollector> {
  const { logger } = deps;
  const clock = deps.clock ?? systemClock;
  const metrics = createMetrics();
  const admission = createAdmission(config, metrics.registry, clock, logger);
  const storage = openStorage(config, logger, clock);
  await retryUntil('migrate', () => storage.migrate(), config.storageTimeoutMs * 6, logger);

  const errorLane = new BoundedLane('error', {
    maxEvents: config.errorQueueCapacity,
    maxBytes: config.errorQueueMaxBytes,
  });
  const standardLane = new BoundedLane('standard', {
    maxEvents: config.queueCapacity,
    maxBytes: config.queueMaxBytes,
  });
  for (const lane of [errorLane, standardLane]) {
    metrics.laneCapacity.set({ lane: lane.name }, lane.limits.maxEvents);
    metrics.laneCapacityBytes.set({ lane: lane.name }, lane.limits.maxBytes);
  }
  metrics.onCollect(() => {
    for (const lane of [errorLane, standardLane]) {
      metrics.laneDepth.set({ lane: lane.name }, lane.heldEvents);
      metrics.laneBytes.set({ lane: lane.name }, lane.heldBytes);
    }
  });

  const writer = new BatchWriterLoop({
    errorLane,
    standardLane,
    storage,
    batchSize: config.batchSize,
    flushIntervalMs: config.flushIntervalMs,
    backoff: DEFAULT_BACKOFF,
    clock,
    logger: logger.child({ component: 'writer' }),
    metrics,
  });
  const readiness = new Readiness(metrics);
  const health = new StorageHealthMonitor({
    ping: () => storage.ping(),
    readiness,
    intervalMs: config.healthIntervalMs,
    timeoutMs: config.storageTimeoutMs,
    logger: logger.child({ component: 'health' }),
  });
  await health.start();
  writer.start();

  const ingest = new IngestService({
    limits: eventLimits(config),
    maxEventsPerRequest: config.maxEventsPerRequest,
    sink: new LaneSink({
      errorLane,
      standardLane,
      writer,
      ack: config.ack,
      ackTimeoutMs: config.ackTimeoutMs,
      storageUp: () => readiness.storageUp,
    }),
    rateLimiter: admission.rateLimiter,
    admissionMetrics: admission.metrics,
    clock,
    metrics,
  });
  const app = createApp({
    ingest,
    storage,
    readiness,
    metrics,
    admissionMetrics: admission.metrics,
    keyRing: admission.keyRing,
    corsOrigins: config.corsOrigins ?? [],
    logger,
    maxBodyBytes: config.maxBodyBytes,
    maxJsonDepth: config.maxJsonDepth,
  });
  const server: Server = await listen(app, {
    host: config.host,
    port: config.port,
    keepAliveTimeoutMs: config.keepAliveTimeoutMs,
  });

  const maintenance =
    'ensurePartitions' in storage
      ? new PeriodicTask('partitions', 3_600_000, () => storage.ensurePartitions(), logger)
      : null;
  maintenance?.start();

  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;

  const shutdown = new Shutdown({
    readiness,
    server,
    writer,
    closers: [
      { name: 'health', close: () => health.stop() },
      ...(maintenance ? [{ name: 'partitions', close: () => maintenance.close() }] : []),
      { name: 'storage', close: () => storage.close() },
      { name: 'rate limiter', close: () => admission.close() },
    ],
    drainDelayMs: config.drainDelayMs,
    timeoutMs: config.shutdownTimeoutMs,
    logger,
    exit: deps.exit ?? ((code) => process.exit(code)),
  });
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  logger.info({ url: `http://${host}:${port}`, storage: storage.kind, ack: config.ack }, 'sluice listening');
  return {
    url: `http://${host}:${port}`,
    port,
    server,
    metrics,
    storage,
    shutdown: (reason) => shutdown.trigger(reason),
  };
}
