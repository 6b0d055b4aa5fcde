import type { EventsDialect } from '../layout/events-sql';
import type { StoredRow } from '../layout/rows';

/**
 * `queryEvents` in PostgreSQL's terms (layout/events-sql.ts assembles the page). Attributes of
 * `events` are jsonb, of `metric_samples` canonical JSON text; text matches with ILIKE.
 */
export const PG_EVENTS_DIALECT: EventsDialect = {
  projection: {
    events: `id, ts, type, app, name, version, env,
  NULL::float8 AS value, NULL::bigint AS count, NULL::float8 AS min, NULL::float8 AS max, NULL::float8 AS sum,
  message, error_message, error_kind, error_stack, attributes::text AS attributes`,
    metric_samples: `id, ts, 'metric'::text AS type, app, name, version, env,
  value, count, min, max, sum,
  message, NULL::text AS error_message, NULL::text AS error_kind, NULL::text AS error_stack, attributes`,
  },
  condition(c, table, param) {
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
  },
  // bigint arrives as a string.
  row: (r) => ({ ...r, ts: Number(r.ts), count: r.count === null ? null : Number(r.count) }) as StoredRow,
};
