import { errorRowsInPages, scanErrorsWith } from '../layout/error-scan-sql';
import type { ReadRunner } from '../layout/read-runner';
import type { ErrorMessageRow, ErrorScan, ErrorScanQuery, RowSink } from '../port';
import { PG_ERROR_SCAN_DIALECT } from './query-errors';

/*
 * `scanErrors` on PostgreSQL: the whole minutes of the window that the downsample job has folded
 * (before `error_group_progress.folded_before`) from `error_groups_1h` and `error_groups_1m`, one row per (app,
 * fingerprint) summed over them; the rest of the window (the newest minutes, the partial minute
 * at its start) from raw errors, each part bounded by the scan limit as before; the table's rows
 * too, the most recently seen first. A row of the table stands for its group's errors with the
 * newest one's message, which has the group's template, so grouping all rows by (kind, template)
 * (read/error-groups.ts) gives what raw errors give.
 * Filters the table cannot apply (env, version) read raw errors alone, as before. Every part is
 * read in pages (`onRows`: see the port), in that order.
 */

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

const raw = (run: ReadRunner, q: ErrorScanQuery, onRows: RowSink<ErrorMessageRow>): Promise<ErrorScan> =>
  scanErrorsWith(run, q, PG_ERROR_SCAN_DIALECT, onRows);

/**
 * The folded minutes [fromMinute, beforeMinute), per (app, fingerprint), the `limit` seen most
 * recently: their whole hours from `error_groups_1h`, the minutes at either end from
 * `error_groups_1m` (with an app on their keys, else on `(hour)` and `(minute)`). Resolves to how
 * many rows were read and the oldest `last_ts` among them.
 */
async function foldedRows(
  run: ReadRunner,
  fromMinute: number,
  beforeMinute: number,
  app: string | undefined,
  limit: number,
  onRows: RowSink<ErrorMessageRow>,
): Promise<{ read: number; oldestLastTs: number }> {
  const fromHour = Math.ceil(fromMinute / HOUR_MS) * HOUR_MS;
  const beforeHour = beforeMinute - (beforeMinute % HOUR_MS);
  let oldestLastTs = Infinity;
  const sink: RowSink<ErrorMessageRow> = (rows) => {
    for (const r of rows) oldestLastTs = Math.min(oldestLastTs, r.lastTs);
    return onRows(rows);
  };
  const read = await errorRowsInPages(
    run,
    (param) => {
      const byApp = app === undefined ? '' : ` AND app = ${param(app)}`;
      const columns = 'app, fingerprint, kind, message, count, first_ts, last_ts, last_id';
      const minutes = (from: number, before: number) =>
        `SELECT ${columns} FROM error_groups_1m WHERE minute >= ${param(from)} AND minute < ${param(before)}${byApp}`;
      const parts =
        fromHour < beforeHour
          ? [
              minutes(fromMinute, fromHour),
              `SELECT ${columns} FROM error_groups_1h WHERE hour >= ${param(fromHour)} AND hour < ${param(beforeHour)}${byApp}`,
              minutes(beforeHour, beforeMinute),
            ]
          : [minutes(fromMinute, beforeMinute)];
      return `SELECT app, kind,
              (array_agg(message ORDER BY last_ts DESC, last_id DESC))[1] AS message,
              sum(count) AS count, min(first_ts) AS first_ts, max(last_ts) AS last_ts,
              (array_agg(last_id::text ORDER BY last_ts DESC, last_id DESC))[1] AS last_id
         FROM (${parts.join(' UNION ALL ')}) r
        GROUP BY app, fingerprint, kind
        ORDER BY max(last_ts) DESC, app, fingerprint LIMIT ${param(limit)}`;
    },
    sink,
    [],
  );
  return { read, oldestLastTs };
}

/** `Storage.scanErrors` on PostgreSQL (`onRows`: see the port). */
export async function scanErrorGroups(
  run: ReadRunner,
  q: ErrorScanQuery,
  onRows?: RowSink<ErrorMessageRow>,
): Promise<ErrorScan> {
  const collected: ErrorMessageRow[] = [];
  const sink: RowSink<ErrorMessageRow> =
    onRows ??
    ((rows) => {
      for (const r of rows) collected.push(r);
    });
  const scan = await scanWith(run, q, sink);
  return { rows: collected, boundTs: scan };
}

/** The scan's parts in order, each handed to `sink`; resolves to the scan's `boundTs`. */
async function scanWith(
  run: ReadRunner,
  q: ErrorScanQuery,
  sink: RowSink<ErrorMessageRow>,
): Promise<number | null> {
  if (q.env !== undefined || q.version !== undefined) return (await raw(run, q, sink)).boundTs;
  const [progress] = await run.rows<{ folded_before: string }>(
    () => 'SELECT folded_before FROM error_group_progress',
  );
  const foldedBefore = Number(progress?.folded_before ?? 0);
  const from = q.from ?? 0;
  const tableFrom = Math.ceil(from / MINUTE_MS) * MINUTE_MS;
  const tableTo = Math.min(foldedBefore, q.to === undefined ? Infinity : q.to - (q.to % MINUTE_MS));
  if (tableTo <= tableFrom) return (await raw(run, q, sink)).boundTs;
  // Newest first, as the raw scan reads: the open minutes, then the folded ones, then the start.
  const newest = await raw(run, { ...q, from: tableTo }, sink);
  if (newest.boundTs !== null) return newest.boundTs;
  const folded = await foldedRows(run, tableFrom, tableTo, q.app, q.scanLimit, sink);
  if (folded.read === q.scanLimit) {
    // More (app, fingerprint)s than a read takes: those seen last before the oldest kept are left
    // out (each kept one is counted whole), and the answer says from when it is complete.
    return folded.oldestLastTs;
  }
  if (from >= tableFrom) return null;
  return (await raw(run, { ...q, from, to: tableFrom }, sink)).boundTs;
}
