import type pg from 'pg';
import type { TableColumns } from './columns';

/** Inserts rows of one table on a connection inside an open transaction; resolves to rows newly stored. */
export type RowWriter = <Row>(
  client: pg.PoolClient,
  table: TableColumns<Row>,
  rows: readonly Row[],
) => Promise<number>;
