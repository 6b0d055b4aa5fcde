import type { EventsDialect } from '../layout/events-sql';
import type { ReadCondition } from '../layout/event-read-plan';
import type { StoredRow } from '../layout/rows';
import type { Param } from '../layout/sql-param';
import { bucketsBefore, bucketsFrom, bucketsUpTo } from './sample-buckets';

type TimeCondition = Extract<ReadCondition, { kind: 'from' | 'to' | 'before' | 'notBefore' }>;

/**
 * A condition on `ts` (and the cursor's id); of `metric_samples` (`blocks`), with the bound on
 * `bucket` it implies (sample-buckets.ts), so a page reads only the blocks of its minutes.
 */
function timeCondition(c: TimeCondition, param: Param, blocks: boolean): string {
  const ts = param(c.ts);
  switch (c.kind) {
    case 'from': {
      const sql = `ts >= ${ts}`;
      return blocks ? `${sql} AND ${bucketsFrom('bucket', c.ts, param)}` : sql;
    }
    case 'to': {
      const sql = `ts < ${ts}`;
      return blocks ? `${sql} AND ${bucketsBefore('bucket', ts)}` : sql;
    }
    case 'before': {
      const sql = `(ts, id) < (${ts}, ${param(c.id)}::uuid)`;
      return blocks ? `${sql} AND ${bucketsUpTo('bucket', ts)}` : sql;
    }
    case 'notBefore': {
      const sql = `(ts, id) >= (${ts}, ${param(c.id)}::uuid)`;
      return blocks ? `${sql} AND ${bucketsFrom('bucket', c.ts, param)}` : sql;
    }
  }
}

/**
 * `queryEvents` in PostgreSQL's terms (layout/events-sql.ts assembles the page). Attributes of
 * `events` are jsonb, of `metric_samples` canonical JSON text; text matches with ILIKE, on
 * `events` through the trigram index.
 * `metric_samples` is a view of the blocks (migration 9): each of its time conditions also bounds
 * `bucket`, and it reads newest first by `bucket` before `ts, id` (the same order: the bucket is
 * the minute of `ts`), which the blocks' `(bucket)` and `(name, bucket)` indexes yield backwards,
 * so a page unnests its newest blocks and sorts each minute's samples instead of every sample.
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
      default:
        return timeCondition(c, param, table === 'metric_samples');
    }
  },
  // bigint arrives as a string.
  row: (r) => ({ ...r, ts: Number(r.ts), count: r.count === null ? null : Number(r.count) }) as StoredRow,
  newestFirst: { metric_samples: 'ORDER BY bucket DESC, ts DESC, id DESC' },
  // events_text_trgm (migration 11) serves both ILIKEs of a text of 3 characters or more (a
  // trigram); the blocks' messages have no such index, so there a text is checked row by row.
  textIndexes: { events: 3 },
};
