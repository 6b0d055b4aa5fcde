import type pg from 'pg';
import type { WriteResult } from '../port';
import type { OutcomeOrigin } from '../../loss-map/outcome';

/**
 * Writes one non-empty batch of rows (in the form its write method encodes events) on a
 * checked-out connection, in one transaction of its own: all rows or none. `origins[i]` is row
 * `i`'s loss-map origin (`Storage.writeRows`). Resolves to what
 * `Storage.writeRows` returns; rejects with the database's error, and the caller then destroys
 * the connection.
 */
export type RowsWrite<Row> = (
  client: pg.PoolClient,
  rows: readonly Row[],
  origins?: readonly OutcomeOrigin[],
) => Promise<WriteResult>;
