import type pg from 'pg';
import { deleteInBatches, type DeleteLimits, type DeleteResult } from '../maintenance';
import { ROLLUP_TABLE, ROLLUP_WIDTH_MS, type RollupResolution } from '../layout/rollups';

const MINUTE_MS = ROLLUP_WIDTH_MS['1m'];

/*
 * Purge SQL for the scheduler's purge job, on the job's transaction client. Every DELETE is
 * bounded: `batchSize` rows per statement, `maxRows` per call, so a run never turns into one long
 * statement; what is left waits for the next run. Expired daily partitions are dropped whole
 * (see dropExpiredPartitions in partitions.ts); only rows in the default partition are deleted one
 * by one.
 */

/** Runs `sql` (`$1` the bound, `$2` the batch size) in batches within `limits`. */
function deleteByStatement(
  client: pg.ClientBase,
  sql: string,
  bound: number,
  limits: DeleteLimits,
): Promise<DeleteResult> {
  return deleteInBatches(limits, async (n) => (await client.query(sql, [bound, n])).rowCount ?? 0);
}

/** `DELETE` of at most `$2` rows of `table` matching `condition` (on `$1`), located by ctid. */
function batchDeleteSql(table: string, condition: string): string {
  return `DELETE FROM ONLY ${table}
           WHERE ctid = ANY (ARRAY(SELECT ctid FROM ONLY ${table} WHERE ${condition} LIMIT $2))`;
}

/**
 * At most `$2` metric blocks of the default partition with `bucket <= $1` (so with every sample
 * before `$1` + one minute).
 */
const DEFAULT_BLOCKS_UP_TO = batchDeleteSql('metric_blocks_default', 'bucket <= $1');

/**
 * Raw data before `cutoffMs` that landed in the default partitions: metric samples (counted in
 * blocks) and events (rows), each within `limits`.
 */
export async function deleteDefaultPartitionRowsBefore(
  client: pg.ClientBase,
  cutoffMs: number,
  limits: DeleteLimits,
): Promise<DeleteResult> {
  // The blocks of the minute holding the cutoff wait for a later run.
  const samples = await deleteByStatement(client, DEFAULT_BLOCKS_UP_TO, cutoffMs - MINUTE_MS, limits);
  const events = await deleteByStatement(
    client,
    batchDeleteSql('events_default', 'ts < $1'),
    cutoffMs,
    limits,
  );
  return { rows: samples.rows + events.rows, done: samples.done && events.done };
}

/** Rollup rows whose whole bucket ends at or before `cutoffMs` (bucket + width <= cutoff). */
export function deleteRollupsEndingBy(
  client: pg.ClientBase,
  resolution: RollupResolution,
  cutoffMs: number,
  limits: DeleteLimits,
): Promise<DeleteResult> {
  const sql = batchDeleteSql(ROLLUP_TABLE[resolution], 'bucket <= $1');
  return deleteByStatement(client, sql, cutoffMs - ROLLUP_WIDTH_MS[resolution], limits);
}

/**
 * A batch of the loss map's rows of minutes before `$1`: the unfolded ones through their partial
 * index (migration 007), then the folded ones (one per key and minute, so few) by a scan, which
 * runs only when no unfolded row is left to take.
 */
const OUTCOMES_BEFORE = `DELETE FROM event_outcomes WHERE ctid = ANY (ARRAY(
  (SELECT ctid FROM event_outcomes WHERE minute < $1 AND NOT folded LIMIT $2)
  UNION ALL
  (SELECT ctid FROM event_outcomes WHERE minute < $1 AND folded LIMIT $2)
  LIMIT $2))`;

/** The loss map's counts and client report ids of minutes before `cutoffMs`. */
export async function deleteOutcomesBefore(
  client: pg.ClientBase,
  cutoffMs: number,
  limits: DeleteLimits,
): Promise<DeleteResult> {
  const counts = await deleteByStatement(client, OUTCOMES_BEFORE, cutoffMs, limits);
  const reports = await deleteByStatement(
    client,
    batchDeleteSql('client_reports', 'minute < $1'),
    cutoffMs,
    limits,
  );
  return { rows: counts.rows + reports.rows, done: counts.done && reports.done };
}

/**
 * The error groups (and their invalidation log entries) of minutes, and hours, before `cutoffMs`
 * (a midnight): they count raw errors the purge removed.
 */
export async function deleteErrorGroupsBefore(
  client: pg.ClientBase,
  cutoffMs: number,
  limits: DeleteLimits,
): Promise<DeleteResult> {
  const groups = await deleteByStatement(
    client,
    batchDeleteSql('error_groups_1m', 'minute < $1'),
    cutoffMs,
    limits,
  );
  const hours = await deleteByStatement(
    client,
    batchDeleteSql('error_groups_1h', 'hour + 3600000 <= $1'),
    cutoffMs,
    limits,
  );
  const log = await deleteByStatement(
    client,
    batchDeleteSql('error_group_invalidations', 'minute < $1'),
    cutoffMs,
    limits,
  );
  return { rows: groups.rows + hours.rows + log.rows, done: groups.done && hours.done && log.done };
}

/** Run history rows of intervals that started before `cutoffMs`. */
export function deleteSchedulerRunsBefore(
  client: pg.ClientBase,
  cutoffMs: number,
  limits: DeleteLimits,
): Promise<DeleteResult> {
  return deleteByStatement(client, batchDeleteSql('scheduler_runs', 'slot_ms < $1'), cutoffMs, limits);
}
