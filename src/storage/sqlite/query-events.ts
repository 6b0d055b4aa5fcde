import type Database from 'better-sqlite3';
import type { EventPage, EventQuery } from '../port';
import { toTelemetryEvent, type StoredRow } from '../layout/rows';
import { whereFilters } from './filters';

/** Both tables projected onto one row shape, as in the PostgreSQL adapter. */
const EVENTS_PROJECTION = `id, ts, type, app, name, version, env,
  NULL AS value, NULL AS count, NULL AS min, NULL AS max, NULL AS sum,
  message, error_message, error_kind, error_stack, attributes`;
const METRIC_SAMPLES_PROJECTION = `id, ts, 'metric' AS type, app, name, version, env,
  value, count, min, max, sum,
  message, NULL AS error_message, NULL AS error_kind, NULL AS error_stack, attributes`;
const NEWEST_FIRST = 'ORDER BY ts DESC, id DESC';

/** Builds the page query with named parameters; each table is ordered and limited, then merged. */
export function eventsSql(q: EventQuery): { sql: string; params: Record<string, unknown> } {
  const params: Record<string, unknown> = { limit: q.limit };
  const where = whereFilters(q, 'ts', params);
  if (q.before !== undefined) {
    where.push('(ts, id) < (@beforeTs, @beforeId)');
    params.beforeTs = q.before.ts;
    params.beforeId = q.before.id;
  }
  const branches: string[] = [];
  if (q.type !== 'metric') {
    if (q.type !== undefined) params.type = q.type;
    const conditions = q.type === undefined ? where : [...where, 'type = @type'];
    branches.push(branch(EVENTS_PROJECTION, 'events', conditions));
  }
  if (q.type === undefined || q.type === 'metric') {
    branches.push(branch(METRIC_SAMPLES_PROJECTION, 'metric_samples', where));
  }
  // SQLite allows ORDER BY/LIMIT in a compound's parts only inside subqueries.
  const sql = branches.map((b) => `SELECT * FROM (${b})`).join(' UNION ALL ');
  return { sql: `${sql} ${NEWEST_FIRST} LIMIT @limit`, params };
}

function branch(projection: string, table: string, where: readonly string[]): string {
  const filter = where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`;
  return `SELECT ${projection} FROM ${table} ${filter} ${NEWEST_FIRST} LIMIT @limit`;
}

export function queryEvents(prepare: (sql: string) => Database.Statement, q: EventQuery): EventPage {
  const { sql, params } = eventsSql(q);
  const rows = prepare(sql).all(params) as StoredRow[];
  const events = rows.map(toTelemetryEvent);
  const last = events[events.length - 1];
  return {
    events,
    next: last !== undefined && events.length === q.limit ? { ts: last.ts, id: last.id } : null,
  };
}
