import type { EventRow, MetricSampleRow } from './rows';

/** A column as written: its name (a key of the row) and its type (PostgreSQL names; SQLite maps them to its storage classes), in table order. */
export interface Column<Row> {
  readonly name: keyof Row & string;
  readonly type: 'uuid' | 'bigint' | 'text' | 'float8' | 'jsonb';
}

export interface TableColumns<Row> {
  readonly table: 'metric_samples' | 'events';
  /** Every column a write sets, in table order. */
  readonly columns: readonly Column<Row>[];
}

export const METRIC_SAMPLES: TableColumns<MetricSampleRow> = {
  table: 'metric_samples',
  columns: [
    { name: 'id', type: 'uuid' },
    { name: 'ts', type: 'bigint' },
    { name: 'app', type: 'text' },
    { name: 'name', type: 'text' },
    { name: 'version', type: 'text' },
    { name: 'env', type: 'text' },
    { name: 'value', type: 'float8' },
    { name: 'count', type: 'bigint' },
    { name: 'min', type: 'float8' },
    { name: 'max', type: 'float8' },
    { name: 'sum', type: 'float8' },
    { name: 'message', type: 'text' },
    { name: 'attributes', type: 'text' },
  ],
};

export const EVENTS: TableColumns<EventRow> = {
  table: 'events',
  columns: [
    { name: 'id', type: 'uuid' },
    { name: 'ts', type: 'bigint' },
    { name: 'type', type: 'text' },
    { name: 'app', type: 'text' },
    { name: 'name', type: 'text' },
    { name: 'version', type: 'text' },
    { name: 'env', type: 'text' },
    { name: 'message', type: 'text' },
    { name: 'error_message', type: 'text' },
    { name: 'error_kind', type: 'text' },
    { name: 'error_stack', type: 'text' },
    { name: 'attributes', type: 'jsonb' },
  ],
};

export function columnList<Row>(t: TableColumns<Row>): string {
  return t.columns.map((c) => c.name).join(', ');
}
