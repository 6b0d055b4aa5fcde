/**
 * Storage assembly from a validated config: which adapter, with which settings, and the
 * migrations step of `sluice migrate`. Part of the composition root.
 */
import type { Registry } from 'prom-client';
import { systemClock, type Clock } from '../clock';
import { createReadStandbyMetrics, createStorageMetrics } from '../metrics/storage-instruments';
import { createSqliteMetrics } from '../metrics/sqlite-instruments';
import type { Config } from '../config/load';
import type { EventLimits } from '../events/limits';
import { keepTrying, retryUntil } from '../lifecycle/startup';
import type { Logger } from '../log/logger';
import { createPostgresStorage, type PostgresStorage } from '../storage/postgres';
import { DatabaseMissingError, ensureDatabase } from '../storage/postgres/ensure-database';
import { createSqliteStorage, type SqliteStorage } from '../storage/sqlite';

/** The storage a process opens: SQLite (tier 1) or PostgreSQL. */
export type OpenedStorage = SqliteStorage | PostgresStorage;

/**
 * Opens the configured storage. `servesReads`: the process answers the read API (a collector), so
 * its reads go to the read standby when `SLUICE_DATABASE_READ_URL` is set; a worker's do not.
 */
export function openStorage(
  config: Config,
  logger: Logger,
  clock: Clock = systemClock,
  registry?: Registry,
  { servesReads = false }: { readonly servesReads?: boolean } = {},
): OpenedStorage {
  if (config.databaseUrl !== null) {
    const standby = servesReads ? config.databaseReadUrl : null;
    return createPostgresStorage({
      connectionString: config.databaseUrl,
      // The writer's own connections: one per batch in flight.
      poolSize: config.writeConcurrency,
      readPoolSize: config.readPoolSize,
      readTimeoutMs: config.readTimeoutMs,
      readWaitMs: config.readWaitMs,
      readSharePercent: config.readSharePercent,
      ...(standby === null
        ? {}
        : {
            readConnectionString: standby,
            standbyMaxLagMs: config.readStandbyMaxLagMs,
            ...(registry === undefined ? {} : { standbyMetrics: createReadStandbyMetrics(registry) }),
          }),
      timeoutMs: config.storageTimeoutMs,
      partitionsAheadDays: config.partitionsAheadDays,
      retentionRawMs: config.retentionRawMs,
      writeMethod: config.pgWriteMethod,
      outcomes: config.outcomes === 'on',
      clock,
      logger,
      metrics: registry === undefined ? undefined : createStorageMetrics(registry),
    });
  }
  return createSqliteStorage({
    path: config.sqlitePath,
    clock,
    logger,
    outcomes: config.outcomes === 'on',
    // A statement waiting on another connection's lock blocks the event loop (better-sqlite3 is
    // synchronous): the shutdown's timers, the forced path's included, run only between waits.
    busyTimeoutMs: config.storageTimeoutMs,
    ...(registry === undefined ? {} : { metrics: createSqliteMetrics(registry) }),
    // A process that registers instruments runs for long (a collector): with `thread`, its commits
    // do not checkpoint on the event loop. `sluice migrate` and `delete` keep SQLite's own.
    ...(registry === undefined || config.sqliteCheckpoints === 'commit'
      ? {}
      : { checkpoints: { truncateAtBytes: config.sqliteWalMaxBytes } }),
  });
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
    maxAppsPerMinute: config.maxAppsPerMinute,
  };
}

/** One attempt at making the storage ready: creates the missing database (once), then migrates. */
function preparationStep(config: Config, storage: OpenedStorage, logger: Logger): () => Promise<void> {
  const url = config.databaseUrl;
  let checked = url === null;
  return async () => {
    if (!checked && url !== null) {
      if ((await ensureDatabase(url, config.storageTimeoutMs)) === 'created') {
        logger.info({ database: new URL(url).pathname.slice(1) }, 'created the database');
      }
      checked = true;
    }
    await storage.migrate();
  };
}

/**
 * Makes the storage ready to use at start: on PostgreSQL creates the database when it is missing
 * and the role may (else fails at once, saying how to create it), then applies the migrations,
 * retrying while the server comes up (for six storage timeouts).
 */
export async function prepareStorage(config: Config, storage: OpenedStorage, logger: Logger): Promise<void> {
  await retryUntil(
    'migrate',
    preparationStep(config, storage, logger),
    config.storageTimeoutMs * 6,
    logger,
    (err) => err instanceof DatabaseMissingError,
  );
}

/**
 * The ingest collector's preparation of the database its reads and loss map use (tier 4): the same
 * steps as `prepareStorage`, in the background and for as long as the database is away (intake
 * follows NATS, not the database), each failure logged once until its reason changes. A database
 * that does not exist and that this role may not create ends the process at once (`exit(1)`) with
 * one line saying how to create it. `ready` resolves true once the database is ready, false when
 * `close()` stopped the retries first.
 */
export function prepareStorageInBackground(
  config: Config,
  storage: OpenedStorage,
  logger: Logger,
  exit: (code: number) => void,
): { readonly ready: Promise<boolean>; close(): void } {
  const stop = new AbortController();
  const ready = keepTrying('preparing the database', preparationStep(config, storage, logger), {
    logger,
    signal: stop.signal,
    fatal: (err) => err instanceof DatabaseMissingError,
    describe: (err) => ({
      fields: { code: (err as { code?: string }).code },
      message: (err as Error).message,
    }),
  }).then(
    (done) => done !== null,
    (err: unknown) => {
      logger.fatal(`queue mode cannot start: ${(err as Error).message}`);
      logger.flush(() => exit(1));
      return false;
    },
  );
  return { ready, close: () => stop.abort() };
}

/** Applies migrations (retrying while the database comes up), then closes the storage. */
export async function migrateStorage(config: Config, logger: Logger): Promise<void> {
  const storage = openStorage(config, logger);
  try {
    await prepareStorage(config, storage, logger);
    logger.info({ storage: storage.kind }, 'migrations applied');
  } finally {
    await storage.close();
  }
}
