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
 * A batch of at most `$2` metric blocks of the default partition with `bucket <= $1` (so with
 * every sample before `$1` + one minute), with the keys of their samples wherever those are (a day
 * may have a partition of one table and not of the other). Its one row is the blocks deleted.
 */
const DEFAULT_BLOCKS_UP_TO = `WITH gone AS (
    DELETE FROM ONLY metric_blocks_default WHERE ctid = ANY (ARRAY(
      SELECT ctid FROM ONLY metric_blocks_default WHERE bucket <= $1 LIMIT $2))
    RETURNING id, ts
  ), keys AS (
    DELETE FROM metric_sample_keys k
     USING (SELECT unnest(id) AS id, unnest(ts) AS ts FROM gone) g
     WHERE k.ts = g.ts AND k.id = g.id
  )
  SELECT count(*)::int AS blocks FROM gone`;

/**
 * A batch of at most `$2` keys of the default partition before `$1` whose sample is in no block:
 * its block went with a daily partition of the blocks while the key sat in the default one. A key
 * whose block is still there stays.
 */
const ORPHAN_DEFAULT_KEYS_BEFORE = `DELETE FROM ONLY metric_sample_keys_default
   WHERE ctid = ANY (ARRAY(
     SELECT k.ctid FROM ONLY metric_sample_keys_default k
      WHERE k.ts < $1 AND NOT EXISTS (
        SELECT FROM metric_blocks b WHERE b.bucket = k.ts - k.ts % ${MINUTE_MS} AND k.id = ANY (b.id))
      LIMIT $2))`;

/**
 * The default partitions' metric samples before `cutoffMs`: the blocks whose minute ends by it,
 * with their keys, then keys left without a block, within `limits` together. Batches and
 * `maxRows` count blocks, then keys; a block of the minute holding the cutoff waits for a later
 * run.
 */
async function deleteDefaultSamplesBefore(
  client: pg.ClientBase,
  cutoffMs: number,
  limits: DeleteLimits,
): Promise<DeleteResult> {
  const blocks = await deleteInBatches(limits, async (n) => {
    const { rows } = await client.query<{ blocks: number }>(DEFAULT_BLOCKS_UP_TO, [cutoffMs - MINUTE_MS, n]);
    return rows[0]?.blocks ?? 0;
  });
  // Keys are looked for once no expired block is left, so that the few left are orphans.
  if (!blocks.done) return blocks;
  const keys = await deleteByStatement(client, ORPHAN_DEFAULT_KEYS_BEFORE, cutoffMs, {
    batchSize: limits.batchSize,
    maxRows: limits.maxRows - blocks.rows,
  });
  return { rows: blocks.rows + keys.rows, done: keys.done };
}

/**
 * Raw data before `cutoffMs` that landed in the default partitions: metric samples (counted in
 * blocks and keys, see deleteDefaultSamplesBefore) and events (rows), each within `limits`.
 */
export async function deleteDefaultPartitionRowsBefore(
  client: pg.ClientBase,
  cutoffMs: number,
  limits: DeleteLimits,
): Promise<DeleteResult> {
  // The writer's table order (keys, blocks, events; see partitions.ts): the key table's lock is
  // claimed first, though the statements reach it through the blocks.
  await client.query('LOCK TABLE metric_sample_keys IN ROW EXCLUSIVE MODE');
  const samples = await deleteDefaultSamplesBefore(client, cutoffMs, limits);
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
