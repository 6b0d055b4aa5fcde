import type { EventsDialect } from '../layout/events-sql';
import type { StoredRow } from '../layout/rows';

/**
 * `queryEvents` in SQLite's terms (layout/events-sql.ts assembles the page), with PostgreSQL's
 * results: an attribute compares as `->>` gives it there (booleans `true` / `false`, where
 * json_each gives 1 / 0), text matches with LIKE (case folded for ASCII letters only).
 */
export const SQLITE_EVENTS_DIALECT: EventsDialect = {
  projection: {
    events: `id, ts, type, app, name, version, env,
  NULL AS value, NULL AS count, NULL AS min, NULL AS max, NULL AS sum,
  message, error_message, error_kind, error_stack, attributes`,
    metric_samples: `id, ts, 'metric' AS type, app, name, version, env,
  value, count, min, max, sum,
  message, NULL AS error_message, NULL AS error_kind, NULL AS error_stack, attributes`,
  },
  condition(c, table, param) {
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
  },
  row: (r) => r as unknown as StoredRow,
};
