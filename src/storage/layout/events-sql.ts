import type { EventPage, EventQuery } from '../port';
import {
  needsScanBound,
  pageOf,
  planEventRead,
  scanBoundOf,
  type ReadCondition,
  type ReadTable,
  type TableRead,
  type TextIndexes,
} from './event-read-plan';
import type { ReadRunner } from './read-runner';
import { toTelemetryEvent, type StoredRow } from './rows';
import type { Param } from './sql-param';

/** What an adapter's SQL for `queryEvents` looks like (each adapter's query-events.ts). */
export interface EventsDialect {
  /** Each table projected onto one row shape (the columns of `StoredRow`), so one UNION ALL merges them. */
  readonly projection: Readonly<Record<ReadTable, string>>;
  /** One condition in SQL. */
  condition(c: ReadCondition, table: ReadTable, param: Param): string;
  /** A row as the driver gives it, as `toTelemetryEvent` takes it. */
  row(r: Record<string, unknown>): StoredRow;
  /**
   * A table's ORDER BY in page order where it is not `ts DESC, id DESC`: the same order, spelt
   * the way the table's index path yields it.
   */
  readonly newestFirst?: Readonly<Partial<Record<ReadTable, string>>>;
  /** The tables whose text filter an index serves, and from what length (`planEventRead`). */
  readonly textIndexes?: TextIndexes;
}

const NEWEST_FIRST = 'ORDER BY ts DESC, id DESC';

function newestFirst(table: ReadTable, d: EventsDialect): string {
  return d.newestFirst?.[table] ?? NEWEST_FIRST;
}

function whereSql(
  conditions: readonly ReadCondition[],
  table: ReadTable,
  param: Param,
  d: EventsDialect,
): string {
  return conditions.length === 0
    ? ''
    : `WHERE ${conditions.map((c) => d.condition(c, table, param)).join(' AND ')}`;
}

/**
 * The page: each table filtered, ordered and limited on its own index path (a subquery, so both
 * engines keep its ORDER BY and LIMIT), then merged. `bound` keeps every table to rows at or
 * newer than it.
 */
export function eventsSql(
  reads: readonly TableRead[],
  limit: number,
  bound: { ts: number; id: string } | null,
  param: Param,
  d: EventsDialect,
): string {
  const limitParam = param(limit);
  const branches = reads.map((r, i) => {
    const conditions = [...r.indexed, ...r.residual];
    if (bound !== null) conditions.push({ kind: 'notBefore', ...bound });
    return `SELECT * FROM (SELECT ${d.projection[r.table]} FROM ${r.table} ${whereSql(conditions, r.table, param, d)} ${newestFirst(r.table, d)} LIMIT ${limitParam}) b${i}`;
  });
  return `${branches.join(' UNION ALL ')} ${NEWEST_FIRST} LIMIT ${limitParam}`;
}

/**
 * Each table's `scanLimit`-th row on its index path, for the tables with residual conditions: an
 * index range read of at most `scanLimit` entries each (the indexed conditions only).
 */
export function scanBoundSql(
  reads: readonly TableRead[],
  scanLimit: number,
  param: Param,
  d: EventsDialect,
): string {
  const offset = param(scanLimit - 1);
  return reads
    .filter((r) => r.residual.length > 0)
    .map(
      (r, i) =>
        `SELECT * FROM (SELECT ts, id FROM ${r.table} ${whereSql(r.indexed, r.table, param, d)} ${newestFirst(r.table, d)} LIMIT 1 OFFSET ${offset}) s${i}`,
    )
    .join(' UNION ALL ');
}

/** `Storage.queryEvents` on an adapter's runner and dialect (see event-read-plan.ts for the plan). */
export async function queryEventsWith(run: ReadRunner, q: EventQuery, d: EventsDialect): Promise<EventPage> {
  const reads = planEventRead(q, d.textIndexes);
  let bound: { ts: number; id: string } | null = null;
  if (needsScanBound(q, reads)) {
    const scanLimit = q.scanLimit;
    const rows = await run.rows<{ ts: number | string; id: string }>((param) =>
      scanBoundSql(reads, scanLimit, param, d),
    );
    bound = scanBoundOf(rows.map((r) => ({ ts: Number(r.ts), id: r.id })));
  }
  const rows = await run.rows<Record<string, unknown>>((param) => eventsSql(reads, q.limit, bound, param, d));
  return pageOf(
    rows.map((r) => toTelemetryEvent(d.row(r))),
    q.limit,
    bound,
  );
}
