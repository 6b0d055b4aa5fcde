import type { ErrorMessageRow, ErrorScan, ErrorScanQuery, RowSink } from '../port';
import { READ_PAGE_ROWS, readInPages, type ReadRunner } from './read-runner';
import type { Param } from './sql-param';

/*
 * `scanErrors` in SQL both adapters run: first the scan bound, the `scanLimit`-th newest error of
 * the window on `events_type_ts_id` (an index read of that many entries); then the errors at or
 * after it, filtered by app, env and version, aggregated by (app, kind, message).
 */

/** What differs between the adapters. */
export interface ErrorScanDialect {
  /** A uuid placeholder as the `id` column compares with it (PostgreSQL casts). */
  readonly uuid: (placeholder: string) => string;
  /** The id of a group's newest row (ties on ts: the highest id), as text. */
  readonly newestId: string;
}

function windowConditions(q: ErrorScanQuery, param: Param): string[] {
  const where = ["type = 'error'"];
  if (q.from !== undefined) where.push(`ts >= ${param(q.from)}`);
  if (q.to !== undefined) where.push(`ts < ${param(q.to)}`);
  return where;
}

/** The bound: `(ts, id)` of the `scanLimit`-th newest error of the window, or no row. */
function errorBoundSql(q: ErrorScanQuery, param: Param): string {
  return `SELECT ts, id FROM events WHERE ${windowConditions(q, param).join(' AND ')}
    ORDER BY ts DESC, id DESC LIMIT 1 OFFSET ${param(q.scanLimit - 1)}`;
}

function errorGroupsSql(
  q: ErrorScanQuery,
  bound: { ts: number; id: string } | null,
  param: Param,
  d: ErrorScanDialect,
): string {
  const where = windowConditions(q, param);
  if (bound !== null) where.push(`(ts, id) >= (${param(bound.ts)}, ${d.uuid(param(bound.id))})`);
  for (const column of ['app', 'env', 'version'] as const) {
    const value = q[column];
    if (value !== undefined) where.push(`${column} = ${param(value)}`);
  }
  return `SELECT app, error_kind AS kind, error_message AS message, count(*) AS count,
            min(ts) AS first_ts, max(ts) AS last_ts, ${d.newestId} AS last_id
       FROM events WHERE ${where.join(' AND ')}
      GROUP BY app, error_kind, error_message`;
}

/** A row of error groups in SQL, of `errorGroupsSql` or the groups tables (PostgreSQL gives bigints and counts as strings). */
export interface ErrorGroupsSqlRow {
  readonly app: string;
  readonly kind: string | null;
  readonly message: string;
  readonly count: number | string;
  readonly first_ts: number | string;
  readonly last_ts: number | string;
  readonly last_id: string;
}

export function toErrorMessageRow(r: ErrorGroupsSqlRow): ErrorMessageRow {
  return {
    app: r.app,
    kind: r.kind,
    message: r.message,
    count: Number(r.count),
    firstTs: Number(r.first_ts),
    lastTs: Number(r.last_ts),
    lastId: r.last_id,
  };
}

/**
 * Runs a read of `ErrorGroupsSqlRow`s in pages, each handed to `onRows` as `ErrorMessageRow`s
 * (collected into the result's rows when `onRows` is absent). Resolves to the number of rows read.
 */
export async function errorRowsInPages(
  run: ReadRunner,
  build: (param: Param) => string,
  onRows: RowSink<ErrorMessageRow> | undefined,
  collected: ErrorMessageRow[],
): Promise<number> {
  let read = 0;
  await readInPages<ErrorGroupsSqlRow>(run, build, READ_PAGE_ROWS, (page) => {
    read += page.length;
    const rows = page.map(toErrorMessageRow);
    if (onRows !== undefined) return onRows(rows);
    for (const r of rows) collected.push(r);
  });
  return read;
}

/** `Storage.scanErrors` on an adapter's runner and dialect (`onRows`: see the port). */
export async function scanErrorsWith(
  run: ReadRunner,
  q: ErrorScanQuery,
  d: ErrorScanDialect,
  onRows?: RowSink<ErrorMessageRow>,
): Promise<ErrorScan> {
  const [found] = await run.rows<{ ts: number | string; id: string }>((param) => errorBoundSql(q, param));
  const bound = found === undefined ? null : { ts: Number(found.ts), id: found.id };
  const rows: ErrorMessageRow[] = [];
  await errorRowsInPages(run, (param) => errorGroupsSql(q, bound, param, d), onRows, rows);
  return { rows, boundTs: bound?.ts ?? null };
}
