import pg from 'pg';
import type { Clock } from '../../clock';
import type { Logger } from '../../log/logger';
import { jobLockName } from '../lock-keys';
import {
  runAndRecord,
  slotStart,
  type MaintenanceJob,
  type MaintenanceRunner,
  type RunAttempt,
} from '../maintenance';
import { tryLockInTransaction } from './advisory-lock';
import { CONNECTION_OPTIONS } from './pool';
import { postgresSession } from './maintenance-session';
import { claimRun, finishRun, setRunTimeouts } from './scheduler-runs';

/** Client read timeout above the run's statement_timeout, so the server's own cancel normally wins. */
const READ_TIMEOUT_MARGIN_MS = 1000;
/** Idle scheduler connections are closed after this long (milliseconds). */
const IDLE_CONNECTION_MS = 30_000;

export interface PostgresMaintenanceOptions {
  /** `postgres://` URL; the scheduler opens its own connections, apart from the storage pool. */
  readonly connectionString: string;
  /** Connect timeout (milliseconds). */
  readonly connectTimeoutMs: number;
  /** statement_timeout and idle_in_transaction_session_timeout of a run (milliseconds). */
  readonly jobTimeoutMs: number;
  /** lock_timeout of a run (milliseconds). */
  readonly lockTimeoutMs: number;
  /** Recorded with each run. */
  readonly instance: string;
  /** Most connections (one per job running at once). */
  readonly maxConnections: number;
  /** Tests only: replaces the database clock (`now()`) of the claim and the job. */
  readonly databaseClock?: Clock;
  readonly logger: Logger;
}

/**
 * A run on PostgreSQL, on one dedicated connection and in ONE transaction:
 *
 *   BEGIN; SET LOCAL statement_timeout, lock_timeout, idle_in_transaction_session_timeout;
 *   pg_try_advisory_xact_lock(key)   -- busy: ROLLBACK, another session is running the job
 *   INSERT claim row                 -- none: ROLLBACK, the window is already claimed
 *   SAVEPOINT; job; RELEASE          -- the job's writes, on this same connection
 *   UPDATE claim row (finish, duration, rows, error); COMMIT
 *
 * The lock, the claim and the writes end together. If the session dies (process killed, backend
 * terminated, idle timeout) the server rolls all of it back and releases the lock: an instance
 * whose session was cut cannot keep writing, and the window stays free for another instance.
 * A job that throws is rolled back to the savepoint and recorded as failed (the window counts
 * as used; the next window tries again).
 */
class PostgresMaintenanceRunner implements MaintenanceRunner {
  private readonly pool: pg.Pool;

  constructor(private readonly o: PostgresMaintenanceOptions) {
    this.pool = new pg.Pool({
      connectionString: o.connectionString,
      max: o.maxConnections,
      idleTimeoutMillis: IDLE_CONNECTION_MS,
      connectionTimeoutMillis: o.connectTimeoutMs,
      query_timeout: o.jobTimeoutMs + READ_TIMEOUT_MARGIN_MS,
      keepAlive: true,
      options: CONNECTION_OPTIONS,
      // Lets operators (and tests) tell which instance holds a lock: pg_locks.pid → pg_stat_activity.
      application_name: `sluice-scheduler:${o.instance}`.slice(0, 63),
    });
    // An idle connection that dies is emitted here; without a listener it would crash the process.
    this.pool.on('error', (err) => o.logger.warn({ err }, 'idle scheduler connection failed; discarded'));
  }

  async attempt<Outcome extends { readonly rows: number }>(
    job: MaintenanceJob<Outcome>,
    intervalMs: number,
  ): Promise<RunAttempt<Outcome>> {
    const client = await this.pool.connect();
    const lost = new AbortController();
    // While checked out, the pool does not listen: a connection failure between queries (e.g.
    // pg_terminate_backend while the job waits) arrives here, and tells the job to stop.
    const onError = (err: Error): void => {
      this.o.logger.warn({ err, job: job.name }, 'scheduler connection failed during a run');
      lost.abort(err);
    };
    client.on('error', onError);
    let broken: Error | true | undefined;
    try {
      return await this.run(client, job, intervalMs, lost.signal);
    } catch (err) {
      broken = err instanceof Error ? err : true;
      throw err;
    } finally {
      client.removeListener('error', onError);
      // A broken transaction's connection is destroyed, never reused: closing it makes the server
      // roll back whatever was left open.
      client.release(broken);
    }
  }

  private async run<Outcome extends { readonly rows: number }>(
    client: pg.PoolClient,
    job: MaintenanceJob<Outcome>,
    intervalMs: number,
    signal: AbortSignal,
  ): Promise<RunAttempt<Outcome>> {
    await client.query('BEGIN');
    await setRunTimeouts(client, {
      statementTimeoutMs: this.o.jobTimeoutMs,
      lockTimeoutMs: this.o.lockTimeoutMs,
      idleInTransactionMs: this.o.jobTimeoutMs,
    });
    const lock = await tryLockInTransaction(
      client,
      jobLockName(job.name),
      this.o.databaseClock?.now() ?? null,
    );
    if (!lock.locked) {
      await client.query('ROLLBACK');
      return { kind: 'lock_busy' };
    }
    const nowMs = lock.nowMs;
    const slotMs = slotStart(nowMs, intervalMs);
    const claimed = await claimRun(client, {
      job: job.name,
      slotMs,
      intervalMs,
      instance: this.o.instance,
      startedMs: nowMs,
    });
    if (!claimed) {
      await client.query('ROLLBACK');
      return { kind: 'claim_lost', nowMs };
    }

    await client.query('SAVEPOINT sluice_job');
    const record = await runAndRecord(
      job,
      slotMs,
      {
        now: nowMs,
        session: postgresSession(client, this.o.logger, this.o.lockTimeoutMs),
        signal,
        logger: this.o.logger,
      },
      {
        afterRun: async () => {
          signal.throwIfAborted();
          await client.query('RELEASE SAVEPOINT sluice_job');
        },
        onError: async (err: unknown) => {
          // The connection is gone: nothing can be recorded, and the server discards everything.
          if (signal.aborted) throw signal.reason ?? err;
          await client.query('ROLLBACK TO SAVEPOINT sluice_job');
        },
      },
    );
    await finishRun(client, record.completion);
    await client.query('COMMIT');
    return record.attempt;
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}

/** The maintenance port on PostgreSQL: one dedicated connection and one transaction per run. */
export function createPostgresMaintenanceRunner(options: PostgresMaintenanceOptions): MaintenanceRunner {
  return new PostgresMaintenanceRunner(options);
}
