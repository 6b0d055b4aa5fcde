import type Database from 'better-sqlite3';
import type { TelemetryEvent } from '../../events/types';
import { columnList, EVENTS, METRIC_SAMPLES, type TableColumns } from '../layout/columns';
import { toRows } from '../layout/rows';

/** `INSERT OR IGNORE` of one row of `t`, each column bound by name from the row object. */
function insertOrIgnore<Row>(t: TableColumns<Row>): string {
  const values = t.columns.map((c) => `@${c.name}`).join(', ');
  return `INSERT OR IGNORE INTO ${t.table} (${columnList(t)}) VALUES (${values})`;
}

const INSERT_METRIC_SAMPLE = insertOrIgnore(METRIC_SAMPLES);
const INSERT_EVENT = insertOrIgnore(EVENTS);

/** Returns a function writing one batch in one transaction; resolves to rows newly stored. */
export function batchWriter(
  db: Database.Database,
  prepare: (sql: string) => Database.Statement,
): (events: readonly TelemetryEvent[]) => number {
  const write = db.transaction((events: readonly TelemetryEvent[]): number => {
    const { metrics, others } = toRows(events);
    let inserted = 0;
    if (metrics.length > 0) {
      const stmt = prepare(INSERT_METRIC_SAMPLE);
      for (const row of metrics) inserted += stmt.run(row).changes;
    }
    if (others.length > 0) {
      const stmt = prepare(INSERT_EVENT);
      for (const row of others) inserted += stmt.run(row).changes;
    }
    return inserted;
  });
  // IMMEDIATE takes the write lock up front: a deferred transaction upgrading to write can fail
  // with SQLITE_BUSY regardless of busy_timeout when another connection wrote meanwhile.
  return (events) => write.immediate(events);
}
