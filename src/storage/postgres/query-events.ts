import type { ReadQuery } from './read-pool';
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
import { positionalParams } from './positional-params';

/** Both tables projected onto one row shape, so one UNION ALL can merge them. */
const PROJECTION: Readonly<Record<ReadTable, string>> = {
  events: `id, ts, type, app, name, version, env,
  NULL::float8 AS value, NULL::bigint AS count, NULL::float8 AS min, NULL::float8 AS max, NULL::float8 AS sum,
  message, error_message, error_kind, error_stack, attributes::text AS attributes`,
  metric_samples: `id, ts, 'metric'::text AS type, app, name, version, env,
  value, count, min, max, sum,
  message, NULL::text AS error_message, NULL::text AS error_kind, NULL::text AS error_stack, attributes`,
};
const NEWEST_FIRST = 'ORDER BY ts DESC, id DESC';

interface PgRow extends Omit<StoredRow, 'ts' | 'count'> {
  /** bigint arrives as a string. */
  readonly ts: string;
  readonly count: string | null;
}

/** One condition in SQL. Attributes of `metric_samples` are JSON text, of `events` jsonb. */
function conditionSql(c: ReadCondition, table: ReadTable, param: Param): string {
  switch (c.kind) {
    case 'equals':
      return `${c.column} = ${param(c.value)}`;
    case 'attribute': {
      const doc = table === 'events' ? 'attributes' : 'attributes::jsonb';
      return `${doc} ->> ${param(c.key)}::text = ${param(c.value)}`;
    }
    case 'text': {
      const p = param(c.pattern);
      return table === 'events' ? `(message ILIKE ${p} OR error_message ILIKE ${p})` : `message ILIKE ${p}`;
    }
    case 'from':
      return `ts >= ${param(c.ts)}`;
    case 'to':
      return `ts < ${param(c.ts)}`;
    case 'before':
      return `(ts, id) < (${param(c.ts)}, ${param(c.id)}::uuid)`;
    case 'notBefore':
      return `(ts, id) >= (${param(c.ts)}, ${param(c.id)}::uuid)`;
  }
}

function whereSql(conditions: readonly ReadCondition[], table: ReadTable, param: Param): string {
  return conditions.length === 0
    ? ''
    : `WHERE ${conditions.map((c) => conditionSql(c, table, param)).join(' AND ')}`;
}

/**
 * The page query: each table filtered, ordered and limited on its own index path, then merged.
 * `bound` (a scan bound) keeps every table to rows at or newer than it.
 */
export function eventsSql(
  reads: readonly TableRead[],
  limit: number,
  bound: { ts: number; id: string } | null = null,
): { text: string; values: unknown[] } {
  const { values, param } = positionalParams();
  const limitParam = param(limit);
  const branches = reads.map((r) => {
    const conditions = [...r.indexed, ...r.residual];
    if (bound !== null) conditions.push({ kind: 'notBefore', ...bound });
    return `(SELECT ${PROJECTION[r.table]} FROM ${r.table} ${whereSql(conditions, r.table, param)} ${NEWEST_FIRST} LIMIT ${limitParam})`;
  });
  const text =
    branches.length === 1
      ? (branches[0] as string)
      : `${branches.join(' UNION ALL ')} ${NEWEST_FIRST} LIMIT ${limitParam}`;
  return { text, values };
}

/**
 * Each table's `scanLimit`-th row on its index path (the indexed conditions only: an index range
 * read of at most `scanLimit` entries), for the tables with residual conditions.
 */
export function scanBoundSql(reads: readonly TableRead[], scanLimit: number): { text: string; values: unknown[] } {
  const { values, param } = positionalParams();
  const offset = param(scanLimit - 1);
  const branches = reads
    .filter((r) => r.residual.length > 0)
    .map(
      (r, i) =>
        `SELECT ts, id::text AS id FROM (SELECT ts, id FROM ${r.table} ${whereSql(r.indexed, r.table, param)} ${NEWEST_FIRST} OFFSET ${offset} LIMIT 1) b${i}`,
    );
  return { text: branches.join(' UNION ALL '), values };
}

export async function queryEvents(read: ReadQuery, q: EventQuery): Promise<EventPage> {
  const reads = planEventRead(q);
  let bound: { ts: number; id: string } | null = null;
  if (needsScanBound(q, reads)) {
    const { text, values } = scanBoundSql(reads, q.scanLimit);
    const { rows } = await read<{ ts: string; id: string }>(text, values);
    bound = scanBoundOf(rows.map((r) => ({ ts: Number(r.ts), id: r.id })));
  }
  const { text, values } = eventsSql(reads, q.limit, bound);
  const { rows } = await read<PgRow>(text, values);
  const events = rows.map((r) =>
    toTelemetryEvent({ ...r, ts: Number(r.ts), count: r.count === null ? null : Number(r.count) }),
  );
  return pageOf(events, q.limit, bound);
}
