import type pg from 'pg';
import type { Logger } from '../../log/logger';
import { DAY_MS } from '../layout/rollups';
import { STORAGE_LOCKS } from '../lock-keys';
import { lockInTransaction } from './advisory-lock';
import { withTransaction } from './pool';

/**
 * In the order their locks are claimed when one transaction touches several: the writer inserts
 * metric blocks, then other events, so DDL that holds one parent while waiting for another follows
 * the same order and cannot deadlock with it.
 */
const PARTITIONED_TABLES = ['metric_blocks', 'events'] as const;
type PartitionedTable = (typeof PARTITIONED_TABLES)[number];

/** Each table's partition key (epoch milliseconds): a block's is its minute, in its samples' day. */
const PARTITION_KEY: Readonly<Record<PartitionedTable, string>> = {
  metric_blocks: 'bucket',
  events: 'ts',
};

/** Longest wait for a lock during partition DDL (milliseconds); capped by the storage timeout. */
const PARTITION_LOCK_TIMEOUT_MS = 1000;

/**
 * Errors that leave the partition for a later run instead of failing the call: a lock not granted
 * in time (55P03 lock_timeout, 57014 statement_timeout), a deadlock victim (40P01), or the
 * partition created meanwhile by a process that took another lock key (42P07; a version from
 * before the lock keys moved to SHA-256, during a rolling upgrade). Inserts meanwhile land in the
 * default partition, so nothing is lost.
 */
const RETRY_LATER = new Set(['55P03', '57014', '40P01', '42P07']);

export interface DailyPartition {
  readonly table: PartitionedTable;
  /** e.g. `metric_blocks_p20261202`. */
  readonly name: string;
  /** Inclusive lower bound (epoch milliseconds, UTC midnight). */
  readonly from: number;
  /** Exclusive upper bound: `from` + one day. */
  readonly to: number;
}

function dayName(dayStart: number): string {
  return new Date(dayStart).toISOString().slice(0, 10).replaceAll('-', '');
}

const DAILY_NAME = /^(metric_blocks|events)_p(\d{4})(\d{2})(\d{2})$/;

/** The daily partition a relation name stands for, or null for any other name (e.g. the default). */
export function parseDailyPartition(name: string): DailyPartition | null {
  const m = DAILY_NAME.exec(name);
  if (m === null) return null;
  const from = Date.UTC(Number(m[2]), Number(m[3]) - 1, Number(m[4]));
  if (dayName(from) !== `${m[2]}${m[3]}${m[4]}`) return null;
  return { table: m[1] as PartitionedTable, name, from, to: from + DAY_MS };
}

/** Partitions of every table for every UTC day touching [fromMs, toMs], oldest first. */
export function dailyPartitions(fromMs: number, toMs: number): DailyPartition[] {
  const out: DailyPartition[] = [];
  for (let day = Math.floor(fromMs / DAY_MS) * DAY_MS; day <= toMs; day += DAY_MS) {
    for (const table of PARTITIONED_TABLES) {
      out.push({ table, name: `${table}_p${dayName(day)}`, from: day, to: day + DAY_MS });
    }
  }
  return out;
}

async function existingPartitions(db: pg.Pool | pg.ClientBase): Promise<Set<string>> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = ANY ($1::regclass[])`,
    [PARTITIONED_TABLES],
  );
  return new Set(rows.map((r) => r.name));
}

interface CreateOptions {
  /** Bound of the lock waits (milliseconds); capped at PARTITION_LOCK_TIMEOUT_MS. */
  readonly timeoutMs: number;
  /**
   * Most rows the default partition may hold for the new partition's range; above it the
   * partition is left alone (moving them would hold ACCESS EXCLUSIVE for long). Default: no limit.
   */
  readonly maxRowsToMove?: number;
}

type CreateResult = 'created' | 'exists' | 'too_many_rows';

/**
 * Creates one partition on `client`, inside the caller's transaction. `PARTITION OF` takes an
 * ACCESS EXCLUSIVE lock on the parent, so that lock is claimed first, with a short lock_timeout:
 * while queued for it every other query on the table queues behind, so giving up quickly (and
 * retrying on the next run) beats stalling the writer. Rows the default partition already holds
 * for the range would make `PARTITION OF` fail; they are moved in the same transaction.
 */
async function createPartitionOn(
  client: pg.ClientBase,
  logger: Logger,
  p: DailyPartition,
  options: CreateOptions,
): Promise<CreateResult> {
  // DDL takes no bind parameters: identifiers come from the fixed table list and a date, bounds are
  // integers checked here.
  if (!Number.isSafeInteger(p.from) || !Number.isSafeInteger(p.to))
    throw new Error(`bad bounds for ${p.name}`);
  const parent = `"${p.table}"`;
  const defaultPartition = `"${p.table}_default"`;
  const key = PARTITION_KEY[p.table];
  const lockTimeoutMs = Math.min(options.timeoutMs, PARTITION_LOCK_TIMEOUT_MS);
  await client.query(`SELECT set_config('lock_timeout', $1, true)`, [`${lockTimeoutMs}ms`]);
  await lockInTransaction(client, STORAGE_LOCKS.partitions);
  const found = await client.query<{ found: boolean }>('SELECT to_regclass($1) IS NOT NULL AS found', [
    p.name,
  ]);
  if (found.rows[0]?.found === true) return 'exists';
  await client.query(`LOCK TABLE ONLY ${parent} IN ACCESS EXCLUSIVE MODE`);
  const limit = options.maxRowsToMove ?? null;
  const stragglers = await client.query<{ n: string }>(
    `SELECT count(*) AS n FROM (SELECT 1 FROM ONLY ${defaultPartition} WHERE ${key} >= $1 AND ${key} < $2
      LIMIT COALESCE($3::bigint + 1, 1)) s`,
    [p.from, p.to, limit],
  );
  const held = Number(stragglers.rows[0]?.n ?? 0);
  if (limit !== null && held > limit) return 'too_many_rows';
  if (held > 0) {
    await client.query(`CREATE TEMP TABLE sluice_partition_move (LIKE ${parent}) ON COMMIT DROP`);
    const moved = await client.query(
      `WITH moved AS (DELETE FROM ONLY ${defaultPartition} WHERE ${key} >= $1 AND ${key} < $2 RETURNING *)
       INSERT INTO sluice_partition_move SELECT * FROM moved`,
      [p.from, p.to],
    );
    logger.warn(
      { partition: p.name, rows: moved.rowCount },
      'default partition held rows for a new partition; moving them',
    );
  }
  await client.query(
    `CREATE TABLE "${p.name}" PARTITION OF ${parent} FOR VALUES FROM (${p.from}) TO (${p.to})`,
  );
  if (held > 0) {
    // Moved, not newly stored: nothing is logged or counted (the write that stored them was).
    await client.query(`INSERT INTO ${parent} SELECT * FROM sluice_partition_move`);
    // Another partition may need the staging table later in the same transaction.
    await client.query('DROP TABLE sluice_partition_move');
  }
  return 'created';
}

function retryLater(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && RETRY_LATER.has(code);
}

/**
 * Creates the missing daily partitions of every partitioned table covering [fromMs, toMs], each in its own
 * transaction on the pool. Cheap when none is missing (one catalog query, no lock). A partition
 * that cannot be created now is logged and left for the next run; other errors (server
 * unreachable) reject.
 */
export async function ensureDailyPartitions(
  pool: pg.Pool,
  logger: Logger,
  range: { readonly fromMs: number; readonly toMs: number; readonly timeoutMs: number },
): Promise<void> {
  const existing = await existingPartitions(pool);
  const created: DailyPartition[] = [];
  try {
    for (const p of dailyPartitions(range.fromMs, range.toMs)) {
      if (existing.has(p.name)) continue;
      try {
        const result = await withTransaction(pool, logger, (client) =>
          createPartitionOn(client, logger, p, range),
        );
        if (result === 'created') created.push(p);
      } catch (err) {
        if (!retryLater(err)) throw err;
        logger.warn({ err, partition: p.name }, 'could not create partition now; will retry on the next run');
      }
    }
  } finally {
    logCreated(logger, created);
  }
}

/** One line for the partitions one run created (a new database's start creates dozens). */
function logCreated(logger: Logger, created: readonly DailyPartition[]): void {
  if (created.length === 0) return;
  const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
  const days = created.map((p) => p.from);
  const fromDay = day(Math.min(...days));
  const toDay = day(Math.max(...days));
  const tables = [...new Set(created.map((p) => p.table))];
  logger.info(
    { created: created.length, tables, fromDay, toDay },
    `created ${created.length} PostgreSQL partitions: ${tables.length} tables, days ${fromDay} to ${toDay}`,
  );
}

/**
 * `body` inside a savepoint of the caller's transaction: on an error that `keep` accepts, the
 * savepoint is rolled back (its locks released, the transaction usable again) and null returned.
 */
export async function inSavepoint<T>(
  client: pg.ClientBase,
  body: () => Promise<T>,
  keep: (err: unknown) => boolean,
): Promise<T | null> {
  await client.query('SAVEPOINT sluice_step');
  try {
    const result = await body();
    await client.query('RELEASE SAVEPOINT sluice_step');
    return result;
  } catch (err) {
    if (!keep(err)) throw err;
    await client.query('ROLLBACK TO SAVEPOINT sluice_step');
    await client.query('RELEASE SAVEPOINT sluice_step');
    return null;
  }
}

/**
 * The scheduler's partitions job: like `ensureDailyPartitions`, but on the job's transaction, one
 * savepoint per partition. Locks claimed stay held until that transaction ends, so the job should
 * commit soon after. A day the default partition already holds more than `maxRowsToMove` rows
 * for is skipped (logged): its rows stay readable where they are. Resolves to partitions created.
 */
export async function ensureDailyPartitionsOn(
  client: pg.ClientBase,
  logger: Logger,
  range: CreateOptions & { readonly fromMs: number; readonly toMs: number },
): Promise<number> {
  const existing = await existingPartitions(client);
  const created: DailyPartition[] = [];
  for (const p of dailyPartitions(range.fromMs, range.toMs)) {
    if (existing.has(p.name)) continue;
    const result = await inSavepoint(client, () => createPartitionOn(client, logger, p, range), retryLater);
    if (result === null) {
      logger.warn({ partition: p.name }, 'could not create partition now; will retry on the next run');
    } else if (result === 'too_many_rows') {
      logger.warn(
        { partition: p.name, maxRowsToMove: range.maxRowsToMove },
        'default partition holds too many rows for this day; leaving them there, no partition created',
      );
    } else if (result === 'created') {
      created.push(p);
    }
  }
  logCreated(logger, created);
  return created.length;
}

/**
 * Drops every daily partition whose whole day ends at or before `cutoffMs`, on the job's
 * transaction (one savepoint each: a parent that cannot be locked in time is left for the next
 * run). Dropping takes ACCESS EXCLUSIVE on the parent until the transaction ends: call it last.
 * Resolves to the partitions dropped and the rows they held (planner estimate).
 */
export async function dropExpiredPartitions(
  client: pg.ClientBase,
  logger: Logger,
  cutoffMs: number,
  timeoutMs: number,
): Promise<{ dropped: number; estimatedRows: number }> {
  const { rows } = await client.query<{ name: string; estimate: string }>(
    `SELECT c.relname AS name, GREATEST(c.reltuples, 0)::bigint AS estimate
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = ANY ($1::regclass[])`,
    [PARTITIONED_TABLES],
  );
  const expired = rows
    .map((r) => ({ partition: parseDailyPartition(r.name), estimate: Number(r.estimate) }))
    .filter(
      (x): x is { partition: DailyPartition; estimate: number } =>
        x.partition !== null && x.partition.to <= cutoffMs,
    )
    .sort(
      (a, b) =>
        PARTITIONED_TABLES.indexOf(a.partition.table) - PARTITIONED_TABLES.indexOf(b.partition.table) ||
        a.partition.from - b.partition.from,
    );
  let dropped = 0;
  let estimatedRows = 0;
  for (const { partition, estimate } of expired) {
    const done = await inSavepoint(
      client,
      async () => {
        await client.query(`SELECT set_config('lock_timeout', $1, true)`, [
          `${Math.min(timeoutMs, PARTITION_LOCK_TIMEOUT_MS)}ms`,
        ]);
        await lockInTransaction(client, STORAGE_LOCKS.partitions);
        await client.query(`DROP TABLE "${partition.name}"`);
        return true;
      },
      retryLater,
    );
    if (done === null) {
      logger.warn(
        { partition: partition.name },
        'could not drop expired partition now; will retry on the next run',
      );
      continue;
    }
    dropped++;
    estimatedRows += estimate;
    logger.info({ partition: partition.name }, 'dropped expired PostgreSQL partition');
  }
  return { dropped, estimatedRows };
}
