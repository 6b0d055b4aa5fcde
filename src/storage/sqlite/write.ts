import type Database from 'better-sqlite3';
import type { TelemetryEvent } from '../../events/types';
import type { WriteResult } from '../port';
import { columnList, EVENTS, METRIC_SAMPLES, type TableColumns } from '../layout/columns';
import { toEventRow, toMetricSampleRow, type EventRow, type MetricSampleRow } from '../layout/rows';
import { StoredTally } from '../layout/stored-tally';
import { insertCounts } from './outcomes';

/** `INSERT OR IGNORE` of one row of `t`, each column bound by name from the row object. */
function insertOrIgnore<Row>(t: TableColumns<Row>): string {
  const values = t.columns.map((c) => `@${c.name}`).join(', ');
  return `INSERT OR IGNORE INTO ${t.table} (${columnList(t)}) VALUES (${values})`;
}

const INSERT_METRIC_SAMPLE = insertOrIgnore(METRIC_SAMPLES);
const INSERT_EVENT = insertOrIgnore(EVENTS);

/** A row as SQLite binds it: of `metric_samples`, or of `events` (which has a `type`). */
export type SqliteRow = MetricSampleRow | EventRow;

/** `e` as the row its statement binds (`Storage.toRow`). */
export function toSqliteRow(e: TelemetryEvent): SqliteRow {
  return e.type === 'metric' ? toMetricSampleRow(e) : toEventRow(e);
}

function isEventRow(row: SqliteRow): row is EventRow {
  return 'type' in row;
}

/**
 * Returns a function writing one batch of rows (`toSqliteRow`, `sqliteRowFromScan`) in one
 * transaction; returns the rows newly stored. With `outcomes` (default), the rows really inserted
 * are counted for the loss map in the same transaction (see layout/stored-tally.ts), and, when some
 * were skipped as duplicates, returned per (app, minute, type) (`WriteResult.storedBy`).
 */
export function batchWriter(
  db: Database.Database,
  prepare: (sql: string) => Database.Statement,
  outcomes = true,
): (rows: readonly SqliteRow[]) => WriteResult {
  const write = db.transaction((rows: readonly SqliteRow[]): WriteResult => {
    const tally = outcomes ? new StoredTally() : null;
    const insertSample = prepare(INSERT_METRIC_SAMPLE);
    const insertEvent = prepare(INSERT_EVENT);
    let inserted = 0;
    for (const row of rows) {
      const event = isEventRow(row);
      const changes = (event ? insertEvent : insertSample).run(row).changes;
      inserted += changes;
      if (changes > 0) tally?.add(row.app, row.ts, event ? row.type : 'metric');
    }
    if (tally === null) return { inserted };
    insertCounts(prepare, tally.rows());
    return inserted < rows.length ? { inserted, storedBy: tally.groups() } : { inserted };
  });
  // IMMEDIATE takes the write lock up front: a deferred transaction upgrading to write can fail
  // with SQLITE_BUSY regardless of busy_timeout when another connection wrote meanwhile.
  return (rows) => write.immediate(rows);
}
