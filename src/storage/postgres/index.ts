import type pg from 'pg';
import type { TelemetryEvent } from '../../events/types';
import type { StorageRow, WriteResult } from '../port';
import { toCopyLine, type CopyLine } from './copy-encoding';
import { applyMigrations } from './migrate';
import type { PostgresStorage, PostgresStorageOptions, WriteMethod } from './options';
import { DAY_MS } from '../layout/rollups';
import { ensureDailyPartitions } from './partitions';
import { createPool, withClient } from './pool';
import { queryEvents } from './query-events';
import { queryMetrics } from './query-metrics';
import { createCopyWrite } from './write-copy';
import { writeUnnest } from './write-unnest';

export type { PostgresStorage, PostgresStorageOptions, WriteMethod } from './options';
export { createPostgresMaintenanceRunner, type PostgresMaintenanceOptions } from './maintenance-runner';

/** A write method's row form: what `toRow` makes and its writer takes (the casts stay here). */
interface RowCodec {
  toRow(event: TelemetryEvent): StorageRow;
  write(client: pg.PoolClient, rows: readonly StorageRow[]): Promise<WriteResult>;
}

function rowCodec(method: WriteMethod): RowCodec {
  if (method === 'unnest') {
    return {
      toRow: (event) => event as unknown as StorageRow,
      write: (client, rows) => writeUnnest(client, rows as unknown as readonly TelemetryEvent[]),
    };
  }
  const write = createCopyWrite();
  return {
    toRow: (event) => toCopyLine(event) as unknown as StorageRow,
    write: (client, rows) => write(client, rows as unknown as readonly CopyLine[]),
  };
}

/** The `Storage` port on PostgreSQL. Opens no connection until the first call. */
export function createPostgresStorage(options: PostgresStorageOptions): PostgresStorage {
  const logger = options.logger.child({ component: 'storage', storage: 'postgres' });
  const pool = createPool(options, logger);
  const codec = rowCodec(options.writeMethod ?? 'copy');
  const writeRows = async (rows: readonly StorageRow[]): Promise<WriteResult> => {
    if (rows.length === 0) return { inserted: 0 };
    return withClient(pool, logger, (client) => codec.write(client, rows));
  };
  let closing: Promise<void> | null = null;

  const partitions = (fromMs: number): Promise<void> =>
    ensureDailyPartitions(pool, logger, {
      fromMs,
      toMs: options.clock.now() + options.partitionsAheadDays * DAY_MS,
      timeoutMs: options.timeoutMs,
    });

  return {
    kind: 'postgres',

    async migrate(): Promise<void> {
      await applyMigrations(pool, options.clock, logger);
      await partitions(options.clock.now() - options.retentionRawMs);
    },

    ensurePartitions: () => partitions(options.clock.now()),

    writeBatch: (events) => writeRows(events.map(codec.toRow)),
    toRow: codec.toRow,
    writeRows,

    queryEvents: (query) => queryEvents(pool, query),
    queryMetrics: (query) => queryMetrics(pool, query),

    async ping(): Promise<void> {
      await pool.query('SELECT 1');
    },

    close(): Promise<void> {
      closing ??= pool.end();
      return closing;
    },
  };
}
