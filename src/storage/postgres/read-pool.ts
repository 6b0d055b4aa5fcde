import type pg from 'pg';
import type { Logger } from '../../log/logger';
import { StorageBusyError } from '../storage-busy';
import { errorText } from '../maintenance';
import { StorageUnavailableError } from '../storage-unavailable';
import { createPool } from './pool';
import { PageConsumerError, ReadDeadlineError, fetchInPages, type ReadPages } from './read-cursor';

/** One read statement: what the read queries need of a pool. */
export type ReadQuery = <Row extends pg.QueryResultRow>(
  text: string,
  values: unknown[],
) => Promise<pg.QueryResult<Row>>;

export interface ReadPoolOptions {
  readonly connectionString: string;
  /** Most read connections. */
  readonly size: number;
  /** statement_timeout of a read (milliseconds). */
  readonly statementTimeoutMs: number;
  /** Longest a read waits for a free connection, and connect timeout (milliseconds). */
  readonly waitMs: number;
  /** Called for each read refused: busy (`pool_full`, `timeout`) or storage `unavailable`. */
  readonly onRefused: (reason: StorageBusyError['reason'] | 'unavailable') => void;
  /** Pool name in logs and `application_name`. Default `read`. */
  readonly name?: string;
}

/** SQLSTATE 57014: the statement was cancelled by statement_timeout. */
const QUERY_CANCELED = '57014';
/**
 * SQLSTATE 42P01: a table is missing. The database's state, not the query's fault: its migrations
 * have not run yet (a queue-mode collector reads a database it or the workers are still migrating).
 */
const UNDEFINED_TABLE = '42P01';

/**
 * The read API's own pool: bounded in size, in how long a read waits for a connection and in how
 * long it runs. A read that cannot get a connection in time, or that runs past its timeout, fails
 * with `StorageBusyError` instead of queueing without end; the writer and the health check have
 * connections of their own, so no read can hold them back. Any other failure of the database or
 * the connection (refused, reset, paused past a timeout, shutting down, out of disk) fails with
 * `StorageUnavailableError`; only a fault of the query itself is thrown as it is (a bug: 500).
 */
export function createReadPool(
  o: ReadPoolOptions,
  logger: Logger,
): { pool: pg.Pool; query: ReadQuery; pages: ReadPages } {
  const pool = createPool(
    {
      connectionString: o.connectionString,
      poolSize: o.size,
      timeoutMs: o.statementTimeoutMs,
      connectTimeoutMs: o.waitMs,
      name: o.name ?? 'read',
    },
    logger,
  );
  // Connections checked out to reads (connected, running a query): a pool whose members are still
  // connecting is not busy, the server is unreachable.
  let inUse = 0;
  pool.on('acquire', () => void inUse++);
  pool.on('release', () => void inUse--);
  /** The error a read fails with: busy, unavailable, or the query's own fault as it is. */
  const failure = (err: unknown): unknown => {
    const busy = busyError(err, inUse >= o.size, o);
    if (busy !== null) {
      o.onRefused(busy.reason);
      return busy;
    }
    if (isQueryFault(err)) return err;
    o.onRefused('unavailable');
    return new StorageUnavailableError(`PostgreSQL cannot serve reads now: ${errorText(err)}`, {
      cause: err,
    });
  };
  const query: ReadQuery = async (text, values) => {
    try {
      return await pool.query(text, values);
    } catch (err) {
      throw failure(err);
    }
  };
  // A paged read holds its connection from the first page to the last, within the same timeout as
  // a whole read (read-cursor.ts). A failure after the first page leaves the transaction open: the
  // connection is destroyed, which rolls it back, instead of going back to the pool.
  const pages: ReadPages = async (text, values, pageRows, onPage) => {
    const deadlineMs = performance.now() + o.statementTimeoutMs;
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (err) {
      throw failure(err);
    }
    const onError = (err: Error): void =>
      logger.warn({ err }, 'PostgreSQL read connection failed while in use');
    client.on('error', onError);
    try {
      await fetchInPages(client, text, values, pageRows, deadlineMs, onPage);
      client.removeListener('error', onError);
      client.release();
    } catch (err) {
      client.removeListener('error', onError);
      client.release(true);
      if (err instanceof PageConsumerError) throw err.error;
      throw failure(err instanceof ReadDeadlineError ? { code: QUERY_CANCELED } : err);
    }
  };
  return { pool, query, pages };
}

function busyError(err: unknown, poolFull: boolean, o: ReadPoolOptions): StorageBusyError | null {
  if ((err as { code?: unknown } | null)?.code === QUERY_CANCELED) {
    return new StorageBusyError('timeout', `The read ran longer than ${o.statementTimeoutMs} ms.`);
  }
  // pg-pool's wait for a pooled client and its connect share one timeout and one message; only a
  // pool whose every connection still serves another read means "busy".
  if (poolFull && err instanceof Error && /timeout exceeded when trying to connect/.test(err.message)) {
    return new StorageBusyError(
      'pool_full',
      `All ${o.size} read connections stayed busy for ${o.waitMs} ms; retry after Retry-After.`,
    );
  }
  return null;
}

/**
 * Whether a read failed because of the query itself, which no retry can fix: SQLSTATE class 22
 * (data exception) or 42 (syntax error, undefined object), or a JavaScript error raised before
 * the query left (a bad parameter). Everything else the driver throws is the database's state,
 * a missing table included (`UNDEFINED_TABLE`).
 */
function isQueryFault(err: unknown): boolean {
  if (err instanceof TypeError || err instanceof RangeError || err instanceof SyntaxError) return true;
  const code = (err as { code?: unknown } | null)?.code;
  if (code === UNDEFINED_TABLE) return false;
  return typeof code === 'string' && /^(22|42)[0-9A-Z]{3}$/.test(code);
}
