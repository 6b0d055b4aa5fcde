import { deleteAppData } from './delete-app';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Clock } from '../../clock';
import type { Logger } from '../../log/logger';
import type { Storage, StorageRow } from '../port';
import { sqliteMaintenance, type SqliteMaintenance } from './maintenance';
import { applySqliteMigrations } from './migrate';
import { queryAppsWith, queryMetricNameWith, queryMetricNamesWith } from '../layout/activity-sql';
import { scanErrorsWith } from '../layout/error-scan-sql';
import { handInPages, READ_PAGE_ROWS } from '../layout/read-runner';
import { queryEventsWith } from '../layout/events-sql';
import { SQLITE_ERROR_SCAN_DIALECT } from './query-errors';
import { SQLITE_EVENTS_DIALECT } from './query-events';
import { sqliteReadRunner } from './read-runner';
import { queryMetrics } from './query-metrics';
import { readOrUnavailable } from './read-failure';
import { statementCache } from './statements';
import { batchWriter, toSqliteRow, type SqliteRow } from './write';
import { sqliteRowFromScan } from './row-from-scan';
import { outcomeWriter, queryOutcomes } from './outcomes';
import type { SqliteMetrics } from '../../metrics/sqlite-instruments';
import { WalCheckpointer, type WalCheckpointOptions } from './wal-checkpointer';
import { CallTimer, untimed, type SqliteCall, type TimeCall } from './call-timer';

export interface SqliteStorageOptions {
  /** Database file; its folder is created if missing. Config default `./data/sluice.db` (`SLUICE_SQLITE_PATH`). */
  readonly path: string;
  /** Not read today; kept so both adapters take the same dependencies. */
  readonly clock: Clock;
  /** Parent logger; the storage logs through a child tagged `component: storage`. */
  readonly logger: Logger;
  /** How long a statement waits for another connection's lock before failing (milliseconds); the event loop waits with it. Config `SLUICE_STORAGE_TIMEOUT_MS`; default 5000. */
  readonly busyTimeoutMs?: number;
  /** Whether `writeRows` counts the rows it stores for the loss map (`SLUICE_OUTCOMES`). Default true. */
  readonly outcomes?: boolean;
  /**
   * Checkpoints of the write-ahead log in a worker thread (wal-checkpointer.ts), none on this
   * connection. Absent: SQLite's own, in the commit that leaves the log 1,000 pages long, on the
   * event loop (what a short-lived process such as `sluice migrate` or a test keeps).
   */
  readonly checkpoints?: WalCheckpointOptions;
  /** The instruments of the checkpoints; none by default. */
  readonly metrics?: SqliteMetrics;
}

const DEFAULT_BUSY_TIMEOUT_MS = 5000;

export type { SqliteMaintenance } from './maintenance';
export { createSqliteMaintenanceRunner, type SqliteMaintenanceOptions } from './maintenance-runner';

export interface SqliteStorage extends Storage {
  readonly kind: 'sqlite';
  /** The scheduler's jobs on this file (tier 1 runs them in-process); see maintenance.ts. */
  readonly maintenance: SqliteMaintenance;
}

/**
 * Times every synchronous call on the event loop into `sluice_sqlite_call_duration_seconds` and
 * `sluice_sqlite_longest_call_seconds` (read, and started again, at each scrape); none without
 * instruments.
 */
function callTimer(metrics: SqliteMetrics | undefined): CallTimer | null {
  if (metrics === undefined) return null;
  const timer = new CallTimer((call, wallMs, runningMs) => {
    metrics.callDuration.observe({ call, time: 'wall' }, wallMs / 1000);
    metrics.callDuration.observe({ call, time: 'running' }, runningMs / 1000);
  });
  const calls: readonly SqliteCall[] = ['write', 'outcomes', 'read', 'job', 'delete'];
  metrics.onCollectCalls(() => {
    const longest = timer.drain();
    for (const call of calls) {
      const l = longest.get(call);
      metrics.longestCall.set({ call, time: 'wall' }, (l?.wallMs ?? 0) / 1000);
      metrics.longestCall.set({ call, time: 'running' }, (l?.runningMs ?? 0) / 1000);
    }
  });
  return timer;
}

/**
 * With `options.checkpoints`: no checkpoint on `db` (a checkpoint in a commit held the event loop
 * for 55–135 ms), and a thread that runs them with its own connection. The log's file is cut back
 * to the bound whenever the log starts again, so its size on disk follows the bound too.
 */
function startCheckpoints(
  db: Database.Database,
  options: SqliteStorageOptions,
  logger: Logger,
): WalCheckpointer | null {
  if (options.checkpoints === undefined) return null;
  const checkpointer = new WalCheckpointer(
    { file: options.path, logger, ...(options.metrics && { metrics: options.metrics }) },
    options.checkpoints,
  );
  db.pragma('wal_autocheckpoint = 0');
  db.pragma(`journal_size_limit = ${checkpointer.truncateAtBytes}`);
  checkpointer.start();
  return checkpointer;
}

/**
 * The `Storage` port on one SQLite file (tier 1), with the same behaviour as PostgreSQL. The file
 * is opened here; better-sqlite3 is synchronous, so each call runs to completion and its result
 * or error is returned as a settled promise.
 */
export function createSqliteStorage(options: SqliteStorageOptions): SqliteStorage {
  const logger = options.logger.child({ component: 'storage', storage: 'sqlite' });
  fs.mkdirSync(path.dirname(path.resolve(options.path)), { recursive: true });
  const db = new Database(options.path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const busyTimeoutMs = Math.trunc(options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS);
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  const checkpointer = startCheckpoints(db, options, logger);
  const prepare = statementCache(db);
  const timer = callTimer(options.metrics);
  const time: TimeCall = timer?.time ?? untimed;
  const write = batchWriter(db, prepare, options.outcomes !== false, time);
  const writeOutcomeBatch = outcomeWriter(db, prepare);
  const run = sqliteReadRunner(prepare, time);

  return {
    kind: 'sqlite',
    maintenance: sqliteMaintenance(db, prepare, time),
    migrate: async () => applySqliteMigrations(db, logger),
    toRow: (event) => toSqliteRow(event) as unknown as StorageRow,
    rowFromScan: (body, event) => sqliteRowFromScan(body, event) as unknown as StorageRow,
    writeRows: async (rows) =>
      rows.length === 0 ? { inserted: 0 } : write(rows as unknown as readonly SqliteRow[]),
    // Every read: a failure of the file, not of the query, is StorageUnavailableError (503).
    queryEvents: (query) => readOrUnavailable(() => queryEventsWith(run, query, SQLITE_EVENTS_DIALECT)),
    queryMetrics: (query) => readOrUnavailable(() => time('read', () => queryMetrics(prepare, query))),
    queryApps: (query) => readOrUnavailable(() => queryAppsWith(run, query)),
    queryMetricNames: (query) => readOrUnavailable(() => queryMetricNamesWith(run, query)),
    queryMetricName: (query) => readOrUnavailable(() => queryMetricNameWith(run, query)),
    scanErrors: (query, onRows) =>
      readOrUnavailable(() => scanErrorsWith(run, query, SQLITE_ERROR_SCAN_DIALECT, onRows)),
    writeOutcomes: async (batch) => time('outcomes', () => writeOutcomeBatch(batch)),
    queryOutcomes: (query, onRows) =>
      readOrUnavailable(async () => {
        const rows = time('read', () => queryOutcomes(prepare, query));
        if (onRows === undefined) return rows;
        await handInPages(rows, READ_PAGE_ROWS, onRows);
        return [];
      }),
    deleteAppData: async (deletion) => time('delete', () => deleteAppData(db, prepare, deletion)),
    async ping(): Promise<void> {
      prepare('SELECT 1').get();
    },
    async close(): Promise<void> {
      // The thread's last checkpoint first: closing the last connection then finds the log empty.
      await checkpointer?.stop();
      if (db.open) db.close();
      timer?.close();
    },
  };
}
