import type Database from 'better-sqlite3';
import type { TelemetryEvent } from '../../events/types';
import { toRows } from '../postgres/row-mapping';

const INSERT_METRIC_SAMPLE = `INSERT OR IGNORE INTO metric_samples
  (id, ts, app, name, version, env, value, count, min, max, sum, message, attributes)
  VALUES (@id, @ts, @app, @name, @version, @env, @value, @count, @min, @max, @sum, @message, @attributes)`;
const INSERT_EVENT = `INSERT OR IGNORE INTO events
  (id, ts, type, app, name, version, env, message, error_message, error_kind, error_stack, attributes)
  VALUES (@id, @ts, @type, @app, @name, @version, @env, @message, @error_message, @error_kind, @error_stack, @attributes)`;

/** Returns a function writing one batch in one transaction; resolves to rows newly stored. */
export function batchWriter(
  db: Database.Database,
  prepare: (sql: string) => Database.Statement,
): (events: readonly TelemetryEvent[]) => number {
  const write = db.transaction((events: readonly TelemetryEvent[]): number => {
    const { metrics, others } = toRows(events);
    let inserted = 0;
    if (metrics.length > 0) {
      const stmt = prepare(INSERT_METRIC_SAMPLE);
      for (const row of metrics) inserted += stmt.run(row).changes;
    }
    if (others.length > 0) {
      const stmt = prepare(INSERT_EVENT);
      for (const row of others) inserted += stmt.run(row).changes;
    }
    return inserted;
  });
  // IMMEDIATE takes the write lock up front: a deferred transaction upgrading to write can fail
  // with SQLITE_BUSY regardless of busy_timeout when another connection wrote meanwhile.
  return (events) => write.immediate(events);
}
