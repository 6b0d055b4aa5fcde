import type pg from 'pg';
import { ROLLUP_TABLE, ROLLUP_WIDTH_MS, type RollupResolution } from './rollup-tables';

/*
 * Purge SQL for the scheduler's purge job, on the job's transaction client. Every DELETE is
 * bounded: `batchSize` rows per statement, `maxRows` per call, so a run never turns into one long
 * statement; what is left waits for the next run. Expired daily partitions are dropped whole
 * (see dropExpiredPartitions in partitions.ts); only rows in the default partition are deleted one
 * by one.
 */

export interface DeleteLimits {
  /** Rows per DELETE statement. */
  readonly batchSize: number;
  /** Most rows deleted by one call. */
  readonly maxRows: number;
}

export interface DeleteResult {
  readonly rows: number;
  /** False when `maxRows` was reached and more rows may remain. */
  readonly done: boolean;
}

async function deleteInBatches(
  client: pg.ClientBase,
  sql: string,
  bound: number,
  limits: DeleteLimits,
): Promise<DeleteResult> {
  let rows = 0;
  while (rows < limits.maxRows) {
    const n = Math.min(limits.batchSize, limits.maxRows - rows);
    const deleted = (await client.query(sql, [bound, n])).rowCount ?? 0;
    rows += deleted;
    if (deleted < n) return { rows, done: true };
  }
  return { rows, done: false };
}

/** `DELETE` of at most `$2` rows of `table` matching `condition` (on `$1`), located by ctid. */
function batchDeleteSql(table: string, condition: string): string {
  return `DELETE FROM ONLY ${table}
           WHERE ctid = ANY (ARRAY(SELECT ctid FROM ONLY ${table} WHERE ${condition} LIMIT $2))`;
}

/** Rows with `ts < cutoffMs` that landed in the default partitions of both raw tables. */
export async function deleteDefaultPartitionRowsBefore(
  client: pg.ClientBase,
  cutoffMs: number,
  limits: DeleteLimits,
): Promise<DeleteResult> {
  let rows = 0;
  let done = true;
  // Same table order as the writer takes its locks.
  for (const table of ['metric_samples_default', 'events_default']) {
    const r = await deleteInBatches(client, batchDeleteSql(table, 'ts < $1'), cutoffMs, limits);
    rows += r.rows;
    done &&= r.done;
  }
  return { rows, done };
}

/** Rollup rows whose whole bucket ends at or before `cutoffMs` (bucket + width <= cutoff). */
export function deleteRollupsEndingBy(
  client: pg.ClientBase,
  resolution: RollupResolution,
  cutoffMs: number,
  limits: DeleteLimits,
): Promise<DeleteResult> {
  const sql = batchDeleteSql(ROLLUP_TABLE[resolution], 'bucket <= $1');
  return deleteInBatches(client, sql, cutoffMs - ROLLUP_WIDTH_MS[resolution], limits);
}

/** Run history rows of intervals that started before `cutoffMs`. */
export function deleteSchedulerRunsBefore(
  client: pg.ClientBase,
  cutoffMs: number,
  limits: DeleteLimits,
): Promise<DeleteResult> {
  return deleteInBatches(client, batchDeleteSql('scheduler_runs', 'slot_ms < $1'), cutoffMs, limits);
}
