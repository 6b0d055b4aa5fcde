import type pg from 'pg';
import type { RunClaim, RunCompletion } from '../maintenance';

/*
 * SQL of one scheduler run on its dedicated connection, inside the run's transaction: timeouts,
 * the claim row and its completion (the lock: advisory-lock.ts). See maintenance-runner.ts.
 */

/** Bounds of a run's transaction (milliseconds), set with `set_config(…, true)` (= SET LOCAL). */
export interface RunTimeouts {
  /** Longest single statement. */
  readonly statementTimeoutMs: number;
  /** Longest wait for any lock (table locks of DDL, row locks). */
  readonly lockTimeoutMs: number;
  /** The server ends the session when the transaction sits idle this long (a hung process). */
  readonly idleInTransactionMs: number;
}

export async function setRunTimeouts(client: pg.ClientBase, t: RunTimeouts): Promise<void> {
  await client.query(
    `SELECT set_config('statement_timeout', $1, true), set_config('lock_timeout', $2, true),
            set_config('idle_in_transaction_session_timeout', $3, true)`,
    [`${t.statementTimeoutMs}ms`, `${t.lockTimeoutMs}ms`, `${t.idleInTransactionMs}ms`],
  );
}

/**
 * Inserts the claim row, only if no run of this job started in this window or later (comparing
 * database times, so a process clock plays no part). Resolves to whether the claim was claimed.
 * Call it while holding the job's advisory lock: the check and the insert are then never raced.
 */
export async function claimRun(client: pg.ClientBase, c: RunClaim): Promise<boolean> {
  const result = await client.query(
    `INSERT INTO scheduler_runs (job, slot_ms, interval_ms, instance, started_ms)
     SELECT $1, $2, $3, $4, $5
      WHERE NOT EXISTS (SELECT 1 FROM scheduler_runs WHERE job = $1 AND started_ms >= $2)
     ON CONFLICT (job, slot_ms) DO NOTHING`,
    [c.job, c.slotMs, c.intervalMs, c.instance, c.startedMs],
  );
  return result.rowCount === 1;
}

export async function finishRun(client: pg.ClientBase, c: RunCompletion): Promise<void> {
  await client.query(
    `UPDATE scheduler_runs SET finished_ms = $3, duration_ms = $4, rows = $5, error = $6
      WHERE job = $1 AND slot_ms = $2`,
    [c.job, c.slotMs, c.finishedMs, c.durationMs, c.rows, c.error],
  );
}
