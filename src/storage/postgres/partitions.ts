import type pg from 'pg';
import type { Logger } from '../../log/logger';
import { withTransaction } from './pool';

export const DAY_MS = 86_400_000;
const PARTITIONED_TABLES = ['events', 'metric_samples'] as const;
type PartitionedTable = (typeof PARTITIONED_TABLES)[number];

/** Serialises partition DDL across processes; per database, like every advisory lock. */
const PARTITIONS_LOCK = 'sluice:partitions';
/** Longest wait for a lock during partition DDL (milliseconds); capped by the storage timeout. */
const PARTITION_LOCK_TIMEOUT_MS = 1000;

/**
 * Errors that leave the partition for a later run instead of failing the call: a lock not granted
 * in time (55P03 lock_timeout, 57014 statement_timeout) or a deadlock victim (40P01). Inserts
 * meanwhile land in the default partition, so nothing is lost.
 */
const RETRY_LATER = new Set(['55P03', '57014', '40P01']);

export interface DailyPartition {
  readonly table: PartitionedTable;
  /** e.g. `metric_samples_p20261202`. */
  readonly name: string;
  /** Inclusive lower bound (epoch milliseconds, UTC midnight). */
  readonly from: number;
  /** Exclusive upper bound: `from` + one day. */
  readonly to: number;
}

function dayName(dayStart: number): string {
  return new Date(dayStart).toISOString().slice(0, 10).replaceAll('-', '');
}

/** Partitions of both tables for every UTC day touching [fromMs, toMs], oldest first. */
export function dailyPartitions(fromMs: number, toMs: number): DailyPartition[] {
  const out: DailyPartition[] = [];
  for (let day = Math.floor(fromMs / DAY_MS) * DAY_MS; day <= toMs; day += DAY_MS) {
    for (const table of PARTITIONED_TABLES) {
      out.push({ table, name: `${table}_p${dayName(day)}`, from: day, to: day + DAY_MS });
    }
  }
  return out;
}

async function existingPartitions(pool: pg.Pool): Promise<Set<string>> {
  const { rows } = await pool.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = ANY ($1::regclass[])`,
    [PARTITIONED_TABLES],
  );
  return new Set(rows.map((r) => r.name));
}

/**
 * Creates one partition. `PARTITION OF` takes an ACCESS EXCLUSIVE lock on the parent, so that lock
 * is taken first, with a short lock_timeout: while queued for it every other query on the table
 * queues behind, so giving up quickly (and retrying on the next run) beats stalling the writer.
 * Rows the default partition already holds for the range would make `PARTITION OF` fail; they
 * are moved in the same transaction.
 */
async function createPartition(
  pool: pg.Pool,
  logger: Logger,
  p: DailyPartition,
  timeoutMs: number,
): Promise<void> {
  // DDL takes no bind parameters: identifiers come from the fixed table list and a date, bounds are
  // integers checked here.
  if (!Number.isSafeInteger(p.from) || !Number.isSafeInteger(p.to))
    throw new Error(`bad bounds for ${p.name}`);
  const parent = `"${p.table}"`;
  const defaultPartition = `"${p.table}_default"`;
  const created = await withTransaction(pool, logger, async (client) => {
    const lockTimeoutMs = Math.min(timeoutMs, PARTITION_LOCK_TIMEOUT_MS);
    await client.query(`SELECT set_config('lock_timeout', $1, true)`, [`${lockTimeoutMs}ms`]);
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [PARTITIONS_LOCK]);
    const found = await client.query<{ found: boolean }>('SELECT to_regclass($1) IS NOT NULL AS found', [
      p.name,
    ]);
    if (found.rows[0]?.found === true) return false;
    await client.query(`LOCK TABLE ONLY ${parent} IN ACCESS EXCLUSIVE MODE`);
    const stragglers = await client.query(
      `SELECT 1 FROM ONLY ${defaultPartition} WHERE ts >= $1 AND ts < $2 LIMIT 1`,
      [p.from, p.to],
    );
    const mustMove = stragglers.rowCount !== 0;
    if (mustMove) {
      await client.query(`CREATE TEMP TABLE sluice_partition_move (LIKE ${parent}) ON COMMIT DROP`);
      const moved = await client.query(
        `WITH moved AS (DELETE FROM ONLY ${defaultPartition} WHERE ts >= $1 AND ts < $2 RETURNING *)
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
    if (mustMove) await client.query(`INSERT INTO ${parent} SELECT * FROM sluice_partition_move`);
    return true;
  });
  if (created) logger.info({ partition: p.name }, 'created PostgreSQL partition');
}

/**
 * Creates the missing daily partitions of both tables covering [fromMs, toMs]. Cheap when none is
 * missing (one catalog query, no lock). A partition that cannot be created now is logged and left
 * for the next run; other errors (server unreachable) reject.
 */
export async function ensureDailyPartitions(
  pool: pg.Pool,
  logger: Logger,
  range: { readonly fromMs: number; readonly toMs: number; readonly timeoutMs: number },
): Promise<void> {
  const existing = await existingPartitions(pool);
  for (const p of dailyPartitions(range.fromMs, range.toMs)) {
    if (existing.has(p.name)) continue;
    try {
      await createPartition(pool, logger, p, range.timeoutMs);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (typeof code !== 'string' || !RETRY_LATER.has(code)) throw err;
      logger.warn({ err, partition: p.name }, 'could not create partition now; will retry on the next run');
    }
  }
}
