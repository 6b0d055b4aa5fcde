import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import type { StoredGroup } from '../../loss-map/outcome';
import type { TelemetryEvent } from '../../events/types';
import type { WriteResult } from '../port';
import { columnList, EVENTS, METRIC_SAMPLES, type TableColumns } from '../layout/columns';
import { toEventRow, toMetricSampleRow, type EventRow, type MetricSampleRow } from '../layout/rows';
import { StoredTally } from '../layout/stored-tally';
import { insertCounts } from './outcomes';
import { untimed, type TimeCall } from './call-timer';

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

/** Most rows one write transaction takes: a batch of more is written in several (slices). */
export const WRITE_SLICE_ROWS = 500;
/**
 * Longest a slice inserts rows before it commits (milliseconds): better-sqlite3 holds the event
 * loop for the whole transaction, so a slice ends at this time even short of its rows.
 */
export const WRITE_SLICE_MS = 10;

/**
 * Returns a function writing one batch of rows (`toSqliteRow`, `sqliteRowFromScan`) in slices: a
 * transaction of at most `WRITE_SLICE_ROWS` rows or `WRITE_SLICE_MS`, with a turn of the event
 * loop between two. It resolves once every slice committed, so an event is acknowledged only
 * after its row is stored; it returns the rows newly stored. With `outcomes` (default), the rows
 * really inserted are counted for the loss map in the transaction that inserts them (see
 * layout/stored-tally.ts), and, when some were skipped as duplicates, returned per (app, minute,
 * type) (`WriteResult.storedBy`).
 *
 * A slice that fails leaves the slices before it committed. The caller writes the batch again (or
 * halves of it): the rows an earlier try committed are then counted as stored by this write, not
 * as duplicates, and not counted a second time (`committedEarlier`). A process that dies between
 * two slices leaves them committed and unacknowledged: the client's resend is deduplicated by
 * `(id, ts)`, as after a crash between a commit and its answer.
 */
export function batchWriter(
  db: Database.Database,
  prepare: (sql: string) => Database.Statement,
  outcomes = true,
  time: TimeCall = untimed,
): (rows: readonly SqliteRow[]) => Promise<WriteResult> {
  /** Rows committed by a slice of a write that failed later: its retry hands the same objects. */
  const committedEarlier = new WeakSet<SqliteRow>();
  /** Writes rows from `from` on until the slice is full; returns where the next slice starts. */
  const slice = db.transaction((rows: readonly SqliteRow[], from: number, batch: BatchTally): number => {
    const tally = outcomes ? new StoredTally() : null;
    const insertSample = prepare(INSERT_METRIC_SAMPLE);
    const insertEvent = prepare(INSERT_EVENT);
    const started = performance.now();
    const end = Math.min(rows.length, from + WRITE_SLICE_ROWS);
    let i = from;
    while (i < end) {
      const row = rows[i++] as SqliteRow;
      const event = isEventRow(row);
      const type = event ? row.type : 'metric';
      if (committedEarlier.has(row)) {
        batch.stored(row, type);
        continue;
      }
      if ((event ? insertEvent : insertSample).run(row).changes > 0) {
        batch.stored(row, type);
        tally?.add(row.app, row.ts, type);
      }
      if (performance.now() - started >= WRITE_SLICE_MS) break;
    }
    if (tally !== null) insertCounts(prepare, tally.rows());
    return i;
  });

  return async (rows) => {
    const batch = new BatchTally(outcomes);
    let from = 0;
    try {
      for (;;) {
        // IMMEDIATE takes the write lock up front: a deferred transaction upgrading to write can
        // fail with SQLITE_BUSY regardless of busy_timeout when another connection wrote meanwhile.
        const next = time('write', () => slice.immediate(rows, from, batch));
        if (next >= rows.length) break;
        from = next;
        await yieldToEventLoop();
      }
    } catch (err) {
      for (let i = 0; i < from; i++) committedEarlier.add(rows[i] as SqliteRow);
      throw err;
    }
    const inserted = batch.inserted;
    if (!outcomes || inserted === rows.length) return { inserted };
    return { inserted, storedBy: batch.groups() };
  };
}

/** What the slices of one batch stored, for its `WriteResult`. */
class BatchTally {
  inserted = 0;
  private readonly tally: StoredTally | null;

  constructor(outcomes: boolean) {
    this.tally = outcomes ? new StoredTally() : null;
  }

  stored(row: SqliteRow, type: string): void {
    this.inserted++;
    this.tally?.add(row.app, row.ts, type);
  }

  groups(): StoredGroup[] {
    return this.tally?.groups() ?? [];
  }
}
