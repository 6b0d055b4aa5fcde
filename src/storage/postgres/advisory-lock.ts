import type pg from 'pg';
import { advisoryLockKey } from '../lock-keys';

/*
 * The one way Sluice takes a PostgreSQL advisory lock: transaction-scoped (`_xact_`), so it is
 * released at COMMIT or ROLLBACK, and by the server when the session dies; never a session lock
 * that a forgotten unlock could leave behind. Keys come from `advisoryLockKey` only.
 */

/**
 * Waits for the lock named `name` inside the caller's transaction. The wait is bounded by the
 * transaction's `lock_timeout` (or `statement_timeout`).
 */
export async function lockInTransaction(client: pg.ClientBase, name: string): Promise<void> {
  await client.query('SELECT pg_advisory_xact_lock($1::bigint)', [advisoryLockKey(name).toString()]);
}

/**
 * Takes the lock named `name` inside the caller's transaction if it is free, never waiting, and
 * reads the database clock in the same statement (`now()`, the transaction start), unless
 * `nowOverrideMs` is given (tests drive time that way).
 */
export async function tryLockInTransaction(
  client: pg.ClientBase,
  name: string,
  nowOverrideMs: number | null,
): Promise<{ locked: boolean; nowMs: number }> {
  const { rows } = await client.query<{ locked: boolean; now_ms: string }>(
    `SELECT pg_try_advisory_xact_lock($1::bigint) AS locked,
            COALESCE($2::bigint, floor(extract(epoch FROM now()) * 1000)::bigint) AS now_ms`,
    [advisoryLockKey(name).toString(), nowOverrideMs],
  );
  const row = rows[0];
  if (row === undefined) throw new Error('advisory lock query returned no row');
  return { locked: row.locked, nowMs: Number(row.now_ms) };
}
