import type { ReadQuery } from './read-pool';
import type { EventPage, EventQuery } from '../port';
import { toTelemetryEvent, type StoredRow } from '../layout/rows';

/** Both tables projected onto one row shape, so one UNION ALL can merge them. */
const EVENTS_PROJECTION = `id, ts, type, app, name, version, env,
  NULL::float8 AS value, NULL::bigint AS count, NULL::float8 AS min, NULL::float8 AS max, NULL::float8 AS sum,
  message, error_message, error_kind, error_stack, attributes::text AS attributes`;
const METRIC_SAMPLES_PROJECTION = `id, ts, 'metric'::text AS type, app, name, version, env,
  value, count, min, max, sum,
  message, NULL::text AS error_message, NULL::text AS error_kind, NULL::text AS error_stack, attributes`;
const NEWEST_FIRST = 'ORDER BY ts DESC, id DESC';

interface PgRow extends Omit<StoredRow, 'ts' | 'count'> {
  /** bigint arrives as a string. */
  readonly ts: string;
  readonly count: string | null;
}

/** Builds the page query: each table ordered and limited on its own index, then merged. */
export function eventsSql(q: EventQuery): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const param = (v: unknown): string => {
    values.push(v);
    return `$${values.length}`;
  };
  const where: string[] = [];
  if (q.app !== undefined) where.push(`app = ${param(q.app)}`);
  if (q.name !== undefined) where.push(`name = ${param(q.name)}`);
  if (q.from !== undefined) where.push(`ts >= ${param(q.from)}`);
  if (q.to !== undefined) where.push(`ts < ${param(q.to)}`);
  if (q.before !== undefined) where.push(`(ts, id) < (${param(q.before.ts)}, ${param(q.before.id)}::uuid)`);
  const limit = param(q.limit);

  const branches: string[] = [];
  if (q.type !== 'metric') {
    const conditions = q.type === undefined ? where : [...where, `type = ${param(q.type)}`];
    branches.push(branch(EVENTS_PROJECTION, 'events', conditions, limit));
  }
  if (q.type === undefined || q.type === 'metric') {
    branches.push(branch(METRIC_SAMPLES_PROJECTION, 'metric_samples', where, limit));
  }
  const text =
    branches.length === 1
      ? (branches[0] as string)
      : `${branches.join(' UNION ALL ')} ${NEWEST_FIRST} LIMIT ${limit}`;
  return { text, values };
}

function branch(projection: string, table: string, where: readonly string[], limit: string): string {
  const filter = where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`;
  return `(SELECT ${projection} FROM ${table} ${filter} ${NEWEST_FIRST} LIMIT ${limit})`;
}

export async function queryEvents(read: ReadQuery, q: EventQuery): Promise<EventPage> {
  const { text, values } = eventsSql(q);
  const { rows } = await read<PgRow>(text, values);
  const events = rows.map((r) =>
    toTelemetryEvent({ ...r, ts: Number(r.ts), count: r.count === null ? null : Number(r.count) }),
  );
  const last = events[events.length - 1];
  return {
    events,
    next: last !== undefined && events.length === q.limit ? { ts: last.ts, id: last.id } : null,
  };
}
