import type pg from 'pg';
import type { TelemetryEvent } from '../../events/types';
import type { StorageRow, WriteResult } from '../port';
import { toCopyLine, type CopyLine } from './copy-encoding';
import { applyMigrations } from './migrate';
import type { PostgresStorage, PostgresStorageOptions, WriteMethod } from './options';
import { DAY_MS } from '../layout/rollups';
import { ensureDailyPartitions } from './partitions';
import type { StorageMetrics } from '../../metrics/storage-instruments';
import { deleteAppData } from './delete-app';
import { createPool, withClient } from './pool';
import type { ReadPages } from './read-cursor';
import { IngestPrecedence } from './ingest-precedence';
import { createReadPool, type ReadQuery } from './read-pool';
import { COMMIT_POSITION_SQL, ReadStandby } from './read-standby';
import type { Logger } from '../../log/logger';
import { queryAppsWith, queryMetricNameWith, queryMetricNamesWith } from '../layout/activity-sql';
import { PG_ACTIVITY_DIALECT } from './activity-dialect';
import { scanErrorGroups } from './read-error-groups';
import { queryEventsWith } from '../layout/events-sql';
import { PG_EVENTS_DIALECT } from './query-events';
import { queryMetrics } from './query-metrics';
import { pgReadRunner } from './read-runner';
import { createCopyWrite } from './write-copy';
import { queryOutcomes, writeOutcomes } from './outcomes';
import { copyLineFromScan } from './copy-line-from-scan';
import type { ScannedEvent } from '../../events/scan/scanned-event';
import type { OutcomeOrigin } from '../../loss-map/outcome';
import { createUnnestWrite } from './write-unnest';

export type { PostgresStorage, PostgresStorageOptions, WriteMethod } from './options';
export { createPostgresMaintenanceRunner, type PostgresMaintenanceOptions } from './maintenance-runner';

/** A write method's row form: what `toRow` makes and its writer takes (the casts stay here). */
interface RowCodec {
  toRow(event: TelemetryEvent): StorageRow;
  rowFromScan?: Storage['rowFromScan'];
  write(
    client: pg.PoolClient,
    rows: readonly StorageRow[],
    origins?: readonly OutcomeOrigin[],
  ): Promise<WriteResult>;
}

/** `countStored`: each write counts its stored rows in the loss map (`SLUICE_OUTCOMES`). */
function rowCodec(method: WriteMethod, countStored: boolean): RowCodec {
  if (method === 'unnest') {
    const write = createUnnestWrite(countStored);
    return {
      toRow: (event) => event as unknown as StorageRow,
      write: (client, rows) => write(client, rows as unknown as readonly TelemetryEvent[]),
    };
  }
  const write = createCopyWrite({ countStored });
  return {
    toRow: (event) => toCopyLine(event) as unknown as StorageRow,
    rowFromScan: (body: Uint8Array, event: ScannedEvent) =>
      copyLineFromScan(body, event) as unknown as StorageRow,
    write: (client, rows, origins) => write(client, rows as unknown as readonly CopyLine[], origins),
  };
}

const DEFAULT_READ_POOL_SIZE = 4;
const DEFAULT_READ_WAIT_MS = 250;
const DEFAULT_READ_SHARE_PERCENT = 10;
const DEFAULT_STANDBY_MAX_LAG_MS = 10_000;
/** As long as the read barrier's wait (READ_LIMITS.barrierTimeoutMs). */
const DEFAULT_STANDBY_WAIT_MS = 500;
/** Migrations and partition DDL run rarely: their connection closes when idle this long (ms). */
const MAINTENANCE_IDLE_MS = 5000;

/**
 * The `Storage` port on PostgreSQL. Opens no connection until the first call. Four pools, so no
 * kind of work can take another's connections: the writer's (`poolSize`), the read API's
 * (bounded wait and statement timeout; see read-pool.ts; with `readConnectionString` a second one
 * on the standby, read-standby.ts), one for the health check (`ping`), and
 * one for migrations and partition DDL. The scheduler's jobs run on connections of their own
 * (maintenance-runner.ts).
 */
export function createPostgresStorage(options: PostgresStorageOptions): PostgresStorage {
  const logger = options.logger.child({ component: 'storage', storage: 'postgres' });
  const { connectionString, timeoutMs } = options;
  const writer = createPool(
    {
      connectionString,
      poolSize: options.poolSize,
      timeoutMs,
      name: 'writer',
    },
    logger,
  );
  const readPoolSize = options.readPoolSize ?? DEFAULT_READ_POOL_SIZE;
  const reads = createReadPool(
    {
      connectionString,
      size: readPoolSize,
      statementTimeoutMs: options.readTimeoutMs ?? timeoutMs,
      waitMs: options.readWaitMs ?? DEFAULT_READ_WAIT_MS,
      onRefused: (reason) => options.metrics?.readsRefused.inc({ reason }),
    },
    logger,
  );
  // Reads on the primary yield to the writer while it is pressed (ingest-precedence.ts); reads on
  // a standby take no CPU from the primary and never wait.
  const precedence = new IngestPrecedence({
    share: (options.readSharePercent ?? DEFAULT_READ_SHARE_PERCENT) / 100,
    waitMs: options.readTimeoutMs ?? timeoutMs,
    onDeferred: (waitedMs) => {
      options.metrics?.readsDeferred.inc();
      options.metrics?.readsDeferredSeconds.inc(waitedMs / 1000);
    },
    onRefused: () => options.metrics?.readsRefused.inc({ reason: 'ingest_first' }),
  });
  const primaryReads: { query: ReadQuery; pages: ReadPages } = {
    query: (text, values) => precedence.run(() => reads.query(text, values)),
    pages: (text, values, pageRows, onPage) =>
      precedence.run(() => reads.pages(text, values, pageRows, onPage)),
  };
  const standbyReads =
    options.readConnectionString === undefined
      ? null
      : createReadPool(
          {
            connectionString: options.readConnectionString,
            size: readPoolSize,
            statementTimeoutMs: options.readTimeoutMs ?? timeoutMs,
            waitMs: options.readWaitMs ?? DEFAULT_READ_WAIT_MS,
            // A standby that cannot answer is not a refused read: the read goes to the primary.
            onRefused: (reason) => {
              if (reason !== 'unavailable') options.metrics?.readsRefused.inc({ reason });
            },
            name: 'read_standby',
          },
          logger,
        );
  const readStandby =
    standbyReads === null
      ? null
      : createStandby(
          standbyReads,
          // The standby's lag check reads the primary's WAL position outside the gate.
          { ...primaryReads, position: reads.query },
          options,
          logger,
        );
  const readQuery = readStandby?.query ?? primaryReads.query;
  const readPages = readStandby?.pages ?? primaryReads.pages;
  const health = createPool({ connectionString, poolSize: 1, timeoutMs, name: 'health' }, logger);
  const maintenance = createPool(
    { connectionString, poolSize: 1, timeoutMs, idleTimeoutMs: MAINTENANCE_IDLE_MS, name: 'maintenance' },
    logger,
  );
  // The loss map's periodic batches (loss-map/outcome-recorder.ts): never on the writer's connections.
  const outcomes = createPool(
    { connectionString, poolSize: 1, timeoutMs, idleTimeoutMs: MAINTENANCE_IDLE_MS, name: 'outcomes' },
    logger,
  );
  const pools = {
    writer,
    read: reads.pool,
    ...(standbyReads === null ? {} : { read_standby: standbyReads.pool }),
    health,
    maintenance,
    outcomes,
  };
  const run = pgReadRunner(readQuery, readPages);
  if (options.metrics !== undefined) {
    const metrics = options.metrics;
    observePools(pools, metrics);
    metrics.onCollectPools(() => metrics.writerPressed.set(precedence.pressed() ? 1 : 0));
  }

  const codec = rowCodec(options.writeMethod ?? 'copy', options.outcomes !== false);
  // The writer's connections with a write on them: what `cutWrites` closes.
  const writing = new Set<pg.PoolClient>();
  const writeRows = async (
    rows: readonly StorageRow[],
    origins?: readonly OutcomeOrigin[],
  ): Promise<WriteResult> => {
    if (rows.length === 0) return { inserted: 0 };
    precedence.writeStarted();
    try {
      return await withClient(writer, logger, async (client) => {
        writing.add(client);
        try {
          const result = await codec.write(client, rows, origins);
          if (readStandby !== null) readStandby.noteCommit(await commitPosition(client, logger));
          return result;
        } finally {
          writing.delete(client);
        }
      });
    } finally {
      precedence.writeEnded();
    }
  };
  const cutWrites = (): void => {
    if (writing.size === 0) return;
    logger.warn({ writes: writing.size }, 'writes in flight cut at a forced shutdown');
    // The socket is destroyed, not ended: `end()` waits for a server busy in a statement (a lock
    // wait). The server sees the closed socket once that statement ends and rolls the transaction
    // back: one whose COMMIT it has not received never commits.
    for (const client of writing) (client as unknown as pg.Client).connection.stream.destroy();
    writing.clear();
  };
  let closing: Promise<void> | null = null;

  const partitions = (fromMs: number): Promise<void> =>
    ensureDailyPartitions(maintenance, logger, {
      fromMs,
      toMs: options.clock.now() + options.partitionsAheadDays * DAY_MS,
      timeoutMs,
    });

  return {
    kind: 'postgres',

    async migrate(): Promise<void> {
      await applyMigrations(maintenance, options.clock, logger);
      await partitions(options.clock.now() - options.retentionRawMs);
    },

    ensurePartitions: () => partitions(options.clock.now()),

    toRow: codec.toRow,
    ...(codec.rowFromScan === undefined ? {} : { rowFromScan: codec.rowFromScan }),
    writeRows,
    cutWrites,

    queryEvents: (query) => queryEventsWith(run, query, PG_EVENTS_DIALECT),
    queryMetrics: (query) => queryMetrics(readQuery, query),
    queryApps: (query) => queryAppsWith(run, query),
    queryMetricNames: (query) => queryMetricNamesWith(run, query, PG_ACTIVITY_DIALECT),
    queryMetricName: (query) => queryMetricNameWith(run, query, PG_ACTIVITY_DIALECT),
    scanErrors: (query, onRows) => scanErrorGroups(run, query, onRows),
    writeOutcomes: (batch) => withClient(outcomes, logger, (client) => writeOutcomes(client, batch)),
    queryOutcomes: (query, onRows) => queryOutcomes(readQuery, readPages, query, onRows),
    deleteAppData: async (deletion) => {
      const deleted = await deleteAppData(writer, logger, deletion);
      if (readStandby !== null) {
        readStandby.noteCommit(await withClient(writer, logger, (client) => commitPosition(client, logger)));
      }
      return deleted;
    },
    readStandby,

    async ping(): Promise<void> {
      await health.query('SELECT 1');
    },

    close(): Promise<void> {
      closing ??= Promise.all(Object.values(pools).map((p) => p.end())).then(() => undefined);
      return closing;
    },
  };
}

function createStandby(
  standby: { query: ReadQuery; pages: ReadPages },
  primary: { query: ReadQuery; pages: ReadPages; position: ReadQuery },
  options: PostgresStorageOptions,
  logger: Logger,
): ReadStandby {
  const metrics = options.standbyMetrics;
  return new ReadStandby({
    standby: standby.query,
    primary: primary.query,
    primaryPosition: primary.position,
    standbyPages: standby.pages,
    primaryPages: primary.pages,
    maxLagMs: options.standbyMaxLagMs ?? DEFAULT_STANDBY_MAX_LAG_MS,
    waitMs: options.standbyWaitMs ?? DEFAULT_STANDBY_WAIT_MS,
    clock: options.clock,
    logger: logger.child({ pool: 'read_standby' }),
    onRoute: (route) => metrics?.readsRouted.inc({ source: route.source, reason: route.reason ?? 'none' }),
    onState: (state) => {
      metrics?.standbyUp.set(state.up ? 1 : 0);
      metrics?.standbyLagSeconds.set(state.lagSeconds ?? -1);
      metrics?.standbyLagBytes.set(state.lagBytes ?? -1);
    },
  });
}

/**
 * The primary's WAL position right after a commit on `client`; null (reads then go to the primary
 * until the next commit) when it cannot be read: the commit stands, so the write must not fail.
 */
async function commitPosition(client: pg.PoolClient, logger: Logger): Promise<string | null> {
  try {
    return (await client.query<{ lsn: string }>(COMMIT_POSITION_SQL)).rows[0]?.lsn ?? null;
  } catch (err) {
    logger.warn(
      { err },
      'could not read the WAL position of a commit: reads go to the primary until the next',
    );
    return null;
  }
}

/** Pool gauges, refreshed at every scrape. */
function observePools(pools: Readonly<Record<string, pg.Pool>>, metrics: StorageMetrics): void {
  metrics.onCollectPools(() => {
    for (const [name, pool] of Object.entries(pools)) {
      metrics.poolConnections.set({ pool: name, state: 'busy' }, pool.totalCount - pool.idleCount);
      metrics.poolConnections.set({ pool: name, state: 'idle' }, pool.idleCount);
      metrics.poolConnections.set({ pool: name, state: 'waiting' }, pool.waitingCount);
    }
  });
}
