import type pg from 'pg';
import { minuteGroupsOf, type MinuteMessageRow } from '../layout/error-group-rows';
import type { ErrorGroupFold } from '../maintenance';

/*
 * The error-group fold of the downsample job (migration 011): `error_groups_1m` holds, per (app,
 * minute, fingerprint), the errors of that minute as raw events give them, for every minute the
 * invalidation log named, and `error_groups_1h` the same per hour, summed from the minutes; the
 * read side is read-error-groups.ts. A claimed (app, minute) is
 * recomputed whole from raw errors and replaces its rows, so folding it twice changes nothing,
 * and a late error (any write logs its minute) is folded at the next run, as the rollups are.
 */

/** The (app, minute)s one fold takes; emptied at every commit of the session. */
const CLAIMED = 'sluice_error_minutes';

/** The errors of the claimed minutes, per exact (kind, message), on `events_app_ts_id`. */
const MESSAGES_OF_CLAIMED = `
SELECT t.app, t.minute, e.error_kind AS kind, e.error_message AS message, count(*) AS count,
       min(e.ts) AS first_ts, max(e.ts) AS last_ts,
       (array_agg(e.id::text ORDER BY e.ts DESC, e.id DESC))[1] AS last_id
  FROM ${CLAIMED} t
  JOIN events e ON e.app = t.app AND e.ts >= t.minute AND e.ts < t.minute + 60000 AND e.type = 'error'
 GROUP BY t.app, t.minute, e.error_kind, e.error_message`;

/** The hours holding the claimed minutes. */
const HOURS_OF_CLAIMED = `SELECT DISTINCT app, minute - minute % 3600000 AS hour FROM ${CLAIMED}`;

/** The rows of the hours holding the claimed minutes, before they are summed again. */
const DELETE_HOURS_OF_CLAIMED = `
DELETE FROM error_groups_1h g USING (${HOURS_OF_CLAIMED}) h WHERE g.app = h.app AND g.hour = h.hour`;

/** The hours holding the claimed minutes, summed again from their minutes' rows. */
const REFOLD_HOURS_OF_CLAIMED = `
INSERT INTO error_groups_1h (app, hour, fingerprint, kind, message, count, first_ts, last_ts, last_id)
SELECT m.app, h.hour, m.fingerprint, m.kind,
       (array_agg(m.message ORDER BY m.last_ts DESC, m.last_id DESC))[1],
       sum(m.count), min(m.first_ts), max(m.last_ts),
       (array_agg(m.last_id ORDER BY m.last_ts DESC, m.last_id DESC))[1]
  FROM (${HOURS_OF_CLAIMED}) h
  JOIN error_groups_1m m ON m.app = h.app AND m.minute >= h.hour AND m.minute < h.hour + 3600000
 GROUP BY m.app, h.hour, m.fingerprint, m.kind`;

interface MessageSqlRow {
  readonly app: string;
  readonly minute: string;
  readonly kind: string | null;
  readonly message: string | null;
  readonly count: string;
  readonly first_ts: string;
  readonly last_ts: string;
  readonly last_id: string;
}

const toMessageRow = (r: MessageSqlRow): MinuteMessageRow => ({
  app: r.app,
  minute: Number(r.minute),
  kind: r.kind,
  message: r.message ?? '',
  count: Number(r.count),
  firstTs: Number(r.first_ts),
  lastTs: Number(r.last_ts),
  lastId: r.last_id,
});

/**
 * Takes up to `maxEntries` entries of the error-group invalidation log for minutes before
 * `foldBeforeMs` (deleted in this transaction), recomputes the groups of their (app, minute)s from
 * raw errors, and, when that emptied the log before `foldBeforeMs`, moves `folded_before` up to it:
 * every minute before it has then been folded once. An entry committed after this statement's
 * snapshot stays for the next run.
 */
export async function foldErrorGroups(
  client: pg.ClientBase,
  maxEntries: number,
  foldBeforeMs: number,
): Promise<ErrorGroupFold> {
  // Most runs find nothing to fold: one probe then, instead of the temporary table's statements.
  const pending = await client.query('SELECT 1 FROM error_group_invalidations WHERE minute < $1 LIMIT 1', [
    foldBeforeMs,
  ]);
  if (pending.rowCount === 0) {
    await advance(client, foldBeforeMs);
    return { entries: 0, minutes: 0, groups: 0, caughtUp: true };
  }
  await client.query(
    `CREATE TEMP TABLE IF NOT EXISTS ${CLAIMED} (app text, minute bigint) ON COMMIT DELETE ROWS`,
  );
  await client.query(`TRUNCATE ${CLAIMED}`);
  const { rows } = await client.query<{ entries: string; minutes: string }>(
    `WITH claimed AS (
       DELETE FROM error_group_invalidations
        WHERE ctid = ANY (ARRAY(SELECT ctid FROM error_group_invalidations WHERE minute < $2 LIMIT $1))
       RETURNING app, minute),
     kept AS (INSERT INTO ${CLAIMED} SELECT DISTINCT app, minute FROM claimed RETURNING 1)
     SELECT (SELECT count(*) FROM claimed) AS entries, (SELECT count(*) FROM kept) AS minutes`,
    [maxEntries, foldBeforeMs],
  );
  const entries = Number(rows[0]?.entries ?? 0);
  const minutes = Number(rows[0]?.minutes ?? 0);
  let groups = 0;
  if (minutes > 0) {
    await client.query(`ANALYZE ${CLAIMED}`);
    const messages = await client.query<MessageSqlRow>(MESSAGES_OF_CLAIMED);
    const rowsOut = await minuteGroupsOf(messages.rows.map(toMessageRow));
    await client.query(
      `DELETE FROM error_groups_1m g USING ${CLAIMED} t WHERE g.app = t.app AND g.minute = t.minute`,
    );
    if (rowsOut.length > 0) {
      await client.query(
        `INSERT INTO error_groups_1m (app, minute, fingerprint, kind, message, count, first_ts, last_ts, last_id)
         SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::bigint[],
                              $7::bigint[], $8::bigint[], $9::uuid[])`,
        [
          rowsOut.map((g) => g.app),
          rowsOut.map((g) => g.minute),
          rowsOut.map((g) => g.fingerprint),
          rowsOut.map((g) => g.kind),
          rowsOut.map((g) => g.message),
          rowsOut.map((g) => g.count),
          rowsOut.map((g) => g.firstTs),
          rowsOut.map((g) => g.lastTs),
          rowsOut.map((g) => g.lastId),
        ],
      );
    }
    await client.query(DELETE_HOURS_OF_CLAIMED);
    groups = rowsOut.length + ((await client.query(REFOLD_HOURS_OF_CLAIMED)).rowCount ?? 0);
  }
  const caughtUp = entries < maxEntries;
  if (caughtUp) await advance(client, foldBeforeMs);
  return { entries, minutes, groups, caughtUp };
}

/** Every minute before `foldBeforeMs` is folded: reads may take the tables up to it. */
async function advance(client: pg.ClientBase, foldBeforeMs: number): Promise<void> {
  await client.query('UPDATE error_group_progress SET folded_before = $1 WHERE folded_before < $1', [
    foldBeforeMs,
  ]);
}
