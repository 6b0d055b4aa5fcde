import type pg from 'pg';
import { columnList, type TableColumns } from './columns';
import type { RowWriter } from './row-writer';

/**
 * One `INSERT … SELECT FROM unnest(…)` per table: one array parameter per column, so the statement
 * text is the same whatever the batch size and is prepared once per connection.
 */
export const writeUnnest: RowWriter = async <Row>(
  client: pg.PoolClient,
  t: TableColumns<Row>,
  rows: readonly Row[],
): Promise<number> => {
  const arrays = t.columns.map((c, i) => `$${i + 1}::${c.type}[]`).join(', ');
  const text = `INSERT INTO ${t.table} (${columnList(t)}) SELECT * FROM unnest(${arrays}) ON CONFLICT DO NOTHING`;
  const values = t.columns.map((c) => rows.map((r) => r[c.name]));
  const result = await client.query({ name: `sluice_unnest_${t.table}`, text, values });
  return result.rowCount ?? 0;
};
