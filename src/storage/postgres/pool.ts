import pg from 'pg';
import type { Logger } from '../../log/logger';

/** Client read timeout above `statement_timeout`, so a live server's own cancel normally wins. */
const READ_TIMEOUT_MARGIN_MS = 250;

/**
 * Startup options of every connection Sluice opens: JIT compilation off. Sluice's statements are
 * bounded by an index range or a row limit, and on tens of millions of rows the planner's cost of
 * the metric views passes `jit_above_cost`: compiling one events page took 2.8 s for 11 ms of
 * execution (docs/CAPACITY.md, "The read side"). An `options` parameter in the connection URL
 * replaces this (and `PGOPTIONS` is not read: these options are given).
 */
export const CONNECTION_OPTIONS = '-c jit=off';

export interface PoolOptions {
  /** `postgres://` URL. */
  readonly connectionString: string;
  /** Most connections. */
  readonly poolSize: number;
  /** Statement timeout, and connect timeout unless `connectTimeoutMs` is given (milliseconds). */
  readonly timeoutMs: number;
  /**
   * Longest wait for a connection (milliseconds): to connect, and for a pooled one to free up
   * when all are busy. Default `timeoutMs`.
   */
  readonly connectTimeoutMs?: number;
  /** Closes connections idle this long (milliseconds). Default: pg's 10 s. */
  readonly idleTimeoutMs?: number;
  /** Which pool (writer, read, health, maintenance): `application_name` is `sluice:<name>`. */
  readonly name?: string;
}

/** A pool whose every connection and statement is bounded by `timeoutMs`; errors are logged, never thrown. */
export function createPool(options: PoolOptions, logger: Logger): pg.Pool {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.poolSize,
    connectionTimeoutMillis: options.connectTimeoutMs ?? options.timeoutMs,
    statement_timeout: options.timeoutMs,
    query_timeout: options.timeoutMs + READ_TIMEOUT_MARGIN_MS,
    keepAlive: true,
    options: CONNECTION_OPTIONS,
    application_name: options.name === undefined ? 'sluice' : `sluice:${options.name}`,
    ...(options.idleTimeoutMs === undefined ? {} : { idleTimeoutMillis: options.idleTimeoutMs }),
  });
  // An idle connection that dies (server restart, pg_terminate_backend) is emitted here; without a
  // listener the EventEmitter would throw and take the process down.
  pool.on('error', (err) => logger.warn({ err }, 'idle PostgreSQL connection failed; it was discarded'));
  return pool;
}

/**
 * Runs `fn` on one checked-out connection. On any error the connection is destroyed rather than
 * reused: after a client-side timeout it may still be busy, and closing it makes the server roll
 * back whatever transaction it had open.
 */
export async function withClient<T>(
  pool: pg.Pool,
  logger: Logger,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  // While checked out the pool no longer listens for this client's errors: a socket failure between
  // queries would otherwise be an unhandled 'error' event.
  const onError = (err: Error): void => logger.warn({ err }, 'PostgreSQL connection failed while in use');
  client.on('error', onError);
  try {
    const result = await fn(client);
    client.removeListener('error', onError);
    client.release();
    return result;
  } catch (err) {
    client.removeListener('error', onError);
    client.release(err instanceof Error ? err : true);
    throw err;
  }
}

/** `fn` between `BEGIN` and `COMMIT` on `client`. On an error the transaction is left for the caller to end. */
export async function inTransaction<T>(client: pg.ClientBase, fn: () => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  const result = await fn();
  await client.query('COMMIT');
  return result;
}

/** `withClient` inside `BEGIN … COMMIT`: all of `fn`'s statements commit, or none. */
export function withTransaction<T>(
  pool: pg.Pool,
  logger: Logger,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  return withClient(pool, logger, (client) => inTransaction(client, () => fn(client)));
}
