#!/usr/bin/env node
/**
 * The composition root: the only module that reads the environment,
 * constructs components and wires them together.
 *   sluice serve     run a collector
 *   sluice migrate   apply storage migrations and exit
 */
import type { Server } from 'node:http';
import { systemClock } from './clock';
import { ConfigError, helpText, loadConfig, type Config } from './config/load';
import type { EventLimits } from './events/limits';
import { createApp } from './http/app';
import { listen } from './http/server';
import { IngestService } from './ingest/ingest-service';
import { PeriodicTask } from './lifecycle/periodic-task';
import { Readiness, StorageHealthMonitor } from './lifecycle/readiness';
import { Shutdown } from './lifecycle/shutdown';
import { retryUntil } from './lifecycle/startup';
import { createLogger, type Logger } from './log/logger';
import { createMetrics } from './metrics/instruments';
import { DEFAULT_BACKOFF } from './pipeline/backoff';
import { BatchWriterLoop } from './pipeline/batch-writer-loop';
import { BoundedLane } from './pipeline/lane';
import type { Storage } from './storage/port';
import { createPostgresStorage, type PostgresStorage } from './storage/postgres';
import { createSqliteStorage } from './storage/sqlite';

const USAGE = `Usage: sluice <command> [--option value ...]

Commands:
  serve     run a collector (default)
  migrate   apply storage migrations, then exit
  help      show this text

Every option is an environment variable or the flag shown beside it; flags win.
No configuration at all: port 8080, SQLite file ./data/sluice.db (tier 1).

Options:
${helpText()}
`;

function openStorage(config: Config, logger: Logger): Storage | PostgresStorage {
  if (config.databaseUrl !== null) {
    return createPostgresStorage({
      connectionString: config.databaseUrl,
      poolSize: config.poolSize,
      timeoutMs: config.storageTimeoutMs,
      partitionsAheadDays: config.partitionsAheadDays,
      retentionRawMs: config.retentionRawMs,
      clock: systemClock,
      logger,
    });
  }
  return createSqliteStorage({ path: config.sqlitePath, clock: systemClock, logger });
}

function eventLimits(config: Config): EventLimits {
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

async function migrate(config: Config, logger: Logger): Promise<void> {
  const storage = openStorage(config, logger);
  try {
    await retryUntil('migrate', () => storage.migrate(), config.storageTimeoutMs * 6, logger);
    logger.info({ storage: storage.kind }, 'migrations applied');
  } finally {
    await storage.close();
  }
}

async function serve(config: Config, logger: Logger): Promise<void> {
  const metrics = createMetrics();
  const storage = openStorage(config, logger);
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
    clock: systemClock,
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
    ack: config.ack,
    ackTimeoutMs: config.ackTimeoutMs,
    errorLane,
    standardLane,
    writer,
    storageUp: () => readiness.storageUp,
    clock: systemClock,
    metrics,
  });
  const app = createApp({
    ingest,
    storage,
    readiness,
    metrics,
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
  logger.info(
    { url: `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`, port, storage: storage.kind, ack: config.ack },
    'sluice listening',
  );

  const shutdown = new Shutdown({
    readiness,
    server,
    writer,
    closers: [
      { name: 'health', close: () => health.stop() },
      ...(maintenance ? [{ name: 'partitions', close: () => maintenance.close() }] : []),
      { name: 'storage', close: () => storage.close() },
    ],
    drainDelayMs: config.drainDelayMs,
    timeoutMs: config.shutdownTimeoutMs,
    logger,
    exit: (code) => process.exit(code),
  });
  process.on('SIGTERM', () => shutdown.trigger('SIGTERM'));
  process.on('SIGINT', () => shutdown.trigger('SIGINT'));
}

async function main(argv: readonly string[]): Promise<void> {
  const [first, ...rest] = argv;
  const command = first === undefined || first.startsWith('--') ? 'serve' : first;
  const args = first === undefined || first.startsWith('--') ? argv : rest;
  if (command === 'help' || args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE);
    return;
  }
  if (command !== 'serve' && command !== 'migrate') {
    process.stderr.write(`sluice: unknown command "${command}"\n\n${USAGE}`);
    process.exit(2);
  }
  let config: Config;
  try {
    config = loadConfig(process.env, args);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`sluice: invalid configuration: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  process.on('uncaughtException', (err) => {
    logger.fatal({ err }, 'uncaught exception');
    logger.flush?.();
    process.exit(1);
  });
  try {
    if (command === 'migrate') await migrate(config, logger);
    else await serve(config, logger);
  } catch (err) {
    logger.fatal({ err }, `${command} failed`);
    logger.flush?.();
    process.stderr.write(`sluice: ${command} failed: ${(err as Error).message}\n`);
    process.exit(1);
  }
}

void main(process.argv.slice(2));
