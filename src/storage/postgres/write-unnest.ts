import type pg from 'pg';
import type { TelemetryEvent } from '../../events/types';
import { columnList, EVENTS, METRIC_SAMPLES, type TableColumns } from '../layout/columns';
import { toRows } from '../layout/rows';
import { inTransaction } from './pool';
import {
  recordedEventInsert,
  recordedSamplesInsert,
  storedGroupsOf,
  type RecordedInsertResult,
} from './recorded-insert';
import type { StoredGroup } from '../../loss-map/outcome';
import type { RowsWrite } from './row-writer';

/**
 * One `INSERT … SELECT FROM unnest(…)` per table: one array parameter per column, so the statement
 * text is the same whatever the batch size and is prepared once per connection.
 */
async function insertUnnest<Row>(
  client: pg.PoolClient,
  t: TableColumns<Row>,
  rows: readonly Row[],
  countStored: boolean,
): Promise<{ inserted: number; storedBy: StoredGroup[] }> {
  if (rows.length === 0) return { inserted: 0, storedBy: [] };
  const arrays = t.columns.map((c, i) => `$${i + 1}::${c.type}[]`).join(', ');
  const columns = columnList(t);
  const source = `unnest(${arrays}) AS u(${columns})`;
  const text =
    t.table === 'metric_samples'
      ? recordedSamplesInsert(source, countStored)
      : recordedEventInsert(
          `INSERT INTO ${t.table} (${columns}) SELECT * FROM ${source} ON CONFLICT DO NOTHING`,
          countStored,
        );
  const values = t.columns.map((c) => rows.map((r) => r[c.name]));
  const result = await client.query<RecordedInsertResult>({
    name: `sluice_unnest_${t.table}_${countStored ? 'counted' : 'uncounted'}`,
    text,
    values,
  });
  const row = result.rows[0];
  return { inserted: row?.inserted ?? 0, storedBy: storedGroupsOf(row, t.table === METRIC_SAMPLES.table) };
}

/**
 * `SLUICE_PG_WRITE_METHOD=unnest`: both tables by `INSERT … ON CONFLICT DO NOTHING` from arrays,
 * each logging and counting the rows it inserted (recorded-insert.ts; `countStored`: the loss map).
 */
export function createUnnestWrite(countStored: boolean): RowsWrite<TelemetryEvent> {
  return (client, events) => {
    const { metrics, others } = toRows(events);
    return inTransaction(client, async () => {
      const samples = await insertUnnest(client, METRIC_SAMPLES, metrics, countStored);
      const rest = await insertUnnest(client, EVENTS, others, countStored);
      const inserted = samples.inserted + rest.inserted;
      return countStored && inserted < events.length
        ? { inserted, storedBy: [...samples.storedBy, ...rest.storedBy] }
        : { inserted };
    });
  };
}
