import type Database from 'better-sqlite3';
import type { EventPage, EventQuery } from '../port';
import {
  needsScanBound,
  pageOf,
  planEventRead,
  scanBoundOf,
  type ReadCondition,
  type ReadTable,
  type TableRead,
} from '../layout/event-read-plan';
import { toTelemetryEvent, type StoredRow } from '../layout/rows';
import type { Param } from '../layout/sql-param';
import { namedParams } from './named-params';

type Prepare = (sql: string) => Database.Statement;

/** Both tables projected onto one row shape, as in the PostgreSQL adapter. */
const PROJECTION: Readonly<Record<ReadTable, string>> = {
  events: `id, ts, type, app, name, version, env,
  NULL AS value, NULL AS count, NULL AS min, NULL AS max, NULL AS sum,
  message, error_message, error_kind, error_stack, attributes`,
  metric_samples: `id, ts, 'metric' AS type, app, name, version, env,
  value, count, min, max, sum,
  message, NULL AS error_message, NULL AS error_kind, NULL AS error_stack, attributes`,
};
const NEWEST_FIRST = 'ORDER BY ts DESC, id DESC';

/**
 * One condition in SQL. An attribute is compared as PostgreSQL's `->>` gives it: booleans as
 * `true` / `false` (json_each gives 1 / 0), numbers and strings as text.
 */
function conditionSql(c: ReadCondition, table: ReadTable, param: Param): string {
  switch (c.kind) {
    case 'equals':
      return `${c.column} = ${param(c.value)}`;
    case 'attribute':
      return `EXISTS (SELECT 1 FROM json_each(attributes) j WHERE j.key = ${param(c.key)}
        AND CASE j.type WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' ELSE CAST(j.value AS TEXT) END = ${param(c.value)})`;
    case 'text': {
      const p = param(c.pattern);
      return table === 'events'
        ? `(message LIKE ${p} ESCAPE '\\' OR error_message LIKE ${p} ESCAPE '\\')`
        : `message LIKE ${p} ESCAPE '\\'`;
    }
    case 'from':
      return `ts >= ${param(c.ts)}`;
    case 'to':
      return `ts < ${param(c.ts)}`;
    case 'before':
      return `(ts, id) < (${param(c.ts)}, ${param(c.id)})`;
    case 'notBefore':
      return `(ts, id) >= (${param(c.ts)}, ${param(c.id)})`;
  }
}

function whereSql(conditions: readonly ReadCondition[], table: ReadTable, param: Param): string {
  return conditions.length === 0
    ? ''
    : `WHERE ${conditions.map((c) => conditionSql(c, table, param)).join(' AND ')}`;
}

/** The page query, as in the PostgreSQL adapter: each table ordered and limited, then merged. */
export function eventsSql(
  reads: readonly TableRead[],
  limit: number,
  bound: { ts: number; id: string } | null = null,
): { sql: string; params: Record<string, unknown> } {
  const { params, param } = namedParams();
  const limitParam = param(limit);
  const branches = reads.map((r) => {
    const conditions = [...r.indexed, ...r.residual];
    if (bound !== null) conditions.push({ kind: 'notBefore', ...bound });
    // SQLite allows ORDER BY/LIMIT in a compound's parts only inside subqueries.
    return `SELECT * FROM (SELECT ${PROJECTION[r.table]} FROM ${r.table} ${whereSql(conditions, r.table, param)} ${NEWEST_FIRST} LIMIT ${limitParam})`;
  });
  return { sql: `${branches.join(' UNION ALL ')} ${NEWEST_FIRST} LIMIT ${limitParam}`, params };
}

/** Each table's `scanLimit`-th row on its index path, for the tables with residual conditions. */
function scanBoundSql(reads: readonly TableRead[], scanLimit: number): { sql: string; params: Record<string, unknown> } {
  const { params, param } = namedParams();
  const offset = param(scanLimit - 1);
  const branches = reads
    .filter((r) => r.residual.length > 0)
    .map(
      (r) =>
        `SELECT * FROM (SELECT ts, id FROM ${r.table} ${whereSql(r.indexed, r.table, param)} ${NEWEST_FIRST} LIMIT 1 OFFSET ${offset})`,
    );
  return { sql: branches.join(' UNION ALL '), params };
}

export function queryEvents(prepare: Prepare, q: EventQuery): EventPage {
  const reads = planEventRead(q);
  let bound: { ts: number; id: string } | null = null;
  if (needsScanBound(q, reads)) {
    const { sql, params } = scanBoundSql(reads, q.scanLimit);
    bound = scanBoundOf(prepare(sql).all(params) as Array<{ ts: number; id: string }>);
  }
  const { sql, params } = eventsSql(reads, q.limit, bound);
  const events = (prepare(sql).all(params) as StoredRow[]).map(toTelemetryEvent);
  return pageOf(events, q.limit, bound);
}
