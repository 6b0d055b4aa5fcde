import type Database from 'better-sqlite3';
import type { RunClaim, RunCompletion } from '../maintenance';

type Prepare = (sql: string) => Database.Statement;

/** As in the PostgreSQL adapter: claimed only if no run of the job started in this window or later. */
export function claimRun(prepare: Prepare, c: RunClaim): boolean {
  return (
    prepare(
      `INSERT INTO scheduler_runs (job, slot_ms, interval_ms, instance, started_ms)
       SELECT @job, @slotMs, @intervalMs, @instance, @startedMs
        WHERE NOT EXISTS (SELECT 1 FROM scheduler_runs WHERE job = @job AND started_ms >= @slotMs)
       ON CONFLICT (job, slot_ms) DO NOTHING`,
    ).run({ ...c }).changes === 1
  );
}

export function finishRun(prepare: Prepare, c: RunCompletion): void {
  prepare(
    `UPDATE scheduler_runs SET finished_ms = @finishedMs, duration_ms = @durationMs, rows = @rows, error = @error
      WHERE job = @job AND slot_ms = @slotMs`,
  ).run({ ...c });
}
