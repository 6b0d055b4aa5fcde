import type { TelemetryEvent } from '../../events/types';
import type { WriteResult } from '../port';
import { applyMigrations } from './migrate';
import type { PostgresStorage, PostgresStorageOptions } from './options';
import { DAY_MS, ensureDailyPartitions } from './partitions';
import { createPool, withClient } from './pool';
import { queryEvents } from './query-events';
import { queryMetrics } from './query-metrics';
import type { BatchWrite } from './row-writer';
import { createCopyWrite } from './write-copy';
import { writeUnnest } from './write-unnest';

export type { PostgresStorage, PostgresStorageOptions, WriteMethod } from './options';

/** The `Storage` port on PostgreSQL. Opens no connection until the first call. */
export function createPostgresStorage(options: PostgresStorageOptions): PostgresStorage {
  const logger = options.logger.child({ component: 'storage', storage: 'postgres' });
  const pool = createPool(options, logger);
  const write: BatchWrite = (options.writeMethod ?? 'copy') === 'copy' ? createCopyWrite() : writeUnnest;
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

    async writeBatch(events: readonly TelemetryEvent[]): Promise<WriteResult> {
      if (events.length === 0) return { inserted: 0 };
      return withClient(pool, logger, (client) => write(client, events));
    },

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
