import type { TelemetryEvent } from '../../src/events/types';
import { createLogger } from '../../src/log/logger';
import {
  createPostgresStorage,
  type PostgresStorage,
  type PostgresStorageOptions,
} from '../../src/storage/postgres';
import type { Storage, WriteResult } from '../../src/storage/port';

/**
 * The PostgreSQL adapter on a test database, with settings a test rarely changes (two writer
 * connections, 5 s timeouts, a day of partitions ahead, 7 days of raw retention, the system clock,
 * a silent logger); `over` sets the rest.
 */
export function openPostgresStorage(
  connectionString: string,
  over: Partial<PostgresStorageOptions> = {},
): PostgresStorage {
  return createPostgresStorage({
    connectionString,
    poolSize: 2,
    timeoutMs: 5000,
    partitionsAheadDays: 1,
    retentionRawMs: 7 * 86_400_000,
    clock: { now: () => Date.now() },
    logger: createLogger('silent'),
    ...over,
  });
}

/** Stores `events` as the writer does: encoded by the storage's `toRow`, then one `writeRows`. */
export function writeEvents(storage: Storage, events: readonly TelemetryEvent[]): Promise<WriteResult> {
  return storage.writeRows(events.map((e) => storage.toRow(e)));
}
