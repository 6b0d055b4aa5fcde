import type Database from 'better-sqlite3';
import type { TelemetryEvent } from '../../events/types';
import { columnList, EVENTS, METRIC_SAMPLES, type TableColumns } from '../layout/columns';
import { toRows } from '../layout/rows';
import { StoredTally } from '../layout/stored-tally';
import { insertCounts } from './outcomes';

/** `INSERT OR IGNORE` of one row of `t`, each column bound by name from the row object. */
function insertOrIgnore<Row>(t: TableColumns<Row>): string {
  const values = t.columns.map((c) => `@${c.name}`).join(', ');
  return `INSERT OR IGNORE INTO ${t.table} (${columnList(t)}) VALUES (${values})`;
}

const INSERT_METRIC_SAMPLE = insertOrIgnore(METRIC_SAMPLES);
const INSERT_EVENT = insertOrIgnore(EVENTS);

/**
 * Returns a function writing one batch in one transaction; resolves to rows newly stored. With
 * `outcomes` (default), the rows really inserted are counted for the loss map in the same
 * transaction (see layout/stored-tally.ts).
 */
export function batchWriter(
  db: Database.Database,
  prepare: (sql: string) => Database.Statement,
  outcomes = true,
): (events: readonly TelemetryEvent[]) => number {
  const write = db.transaction((events: readonly TelemetryEvent[]): number => {
    const { metrics, others } = toRows(events);
    const tally = outcomes ? new StoredTally() : null;
    let inserted = 0;
    if (metrics.length > 0) {
      const stmt = prepare(INSERT_METRIC_SAMPLE);
      for (const row of metrics) {
        const changes = stmt.run(row).changes;
        inserted += changes;
        if (changes > 0) tally?.add(row.app, row.ts, 'metric');
      }
    }
    if (others.length > 0) {
      const stmt = prepare(INSERT_EVENT);
      for (const row of others) {
        const changes = stmt.run(row).changes;
        inserted += changes;
        if (changes > 0) tally?.add(row.app, row.ts, row.type);
      }
    }
    if (tally !== null) insertCounts(prepare, tally.rows());
    return inserted;
  });
  // IMMEDIATE takes the write lock up front: a deferred transaction upgrading to write can fail
  // with SQLITE_BUSY regardless of busy_timeout when another connection wrote meanwhile.
  return (events) => write.immediate(events);
}
