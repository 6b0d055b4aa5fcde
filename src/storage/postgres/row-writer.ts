import type pg from 'pg';
import type { TelemetryEvent } from '../../events/types';
import type { WriteResult } from '../port';

/**
 * Writes one non-empty batch on a checked-out connection, in one transaction of its own: all rows
 * or none. Resolves to what `Storage.writeBatch` returns; rejects with the database's error, and
 * the caller then destroys the connection.
 */
export type BatchWrite = (client: pg.PoolClient, events: readonly TelemetryEvent[]) => Promise<WriteResult>;
