import type { Clock } from '../../clock';
import type { Logger } from '../../log/logger';
import type { ReadStandbyMetrics, StorageMetrics } from '../../metrics/storage-instruments';
import type { Storage } from '../port';
import type { ReadStandby } from './read-standby';

/** How `writeRows` sends rows; both store an `(id, ts)` once (see write-copy.ts and write-unnest.ts). */
export type WriteMethod = 'unnest' | 'copy';

export interface PostgresStorageOptions {
  /** `postgres://` URL of the database. */
  readonly connectionString: string;
  /**
   * The writer's own connections (`writeRows`): no read, health check or job uses
   * them. Config: `SLUICE_WRITE_CONCURRENCY` (default 3), one per batch in flight.
   */
  readonly poolSize: number;
  /** Connections of the read API (`queryEvents`, `queryMetrics`). Config default 4 (`SLUICE_PG_READ_POOL_SIZE`). */
  readonly readPoolSize?: number;
  /**
   * `postgres://` URL of a streaming-replication standby of `connectionString` that takes the
   * reads (read-standby.ts); writes, jobs and locks stay on the primary. Default: none, reads go to
   * the primary (`SLUICE_DATABASE_READ_URL`).
   */
  readonly readConnectionString?: string;
  /**
   * Most replication lag at which the standby still takes reads (milliseconds). Config default
   * 10000 (`SLUICE_READ_STANDBY_MAX_LAG_MS`).
   */
  readonly standbyMaxLagMs?: number;
  /**
   * Longest a read waits for the standby to replay the last commit this collector acknowledged
   * (milliseconds); then it reads the primary. Default 500.
   */
  readonly standbyWaitMs?: number;
  /**
   * statement_timeout of a read, and longest a read on the primary waits for its turn while the
   * writer is pressed (milliseconds). Config default 5000 (`SLUICE_PG_READ_TIMEOUT_MS`).
   */
  readonly readTimeoutMs?: number;
  /**
   * Longest a read waits for a free read connection before it fails with `StorageBusyError`
   * (milliseconds). Config default 250 (`SLUICE_PG_READ_WAIT_MS`).
   */
  readonly readWaitMs?: number;
  /**
   * Share of the time reads on the primary may take while the writer is pressed (percent, 1–100;
   * 100: reads never yield). Ingest has precedence (ingest-precedence.ts). Config default 10
   * (`SLUICE_PG_READ_SHARE_PERCENT`).
   */
  readonly readSharePercent?: number;
  /**
   * Bound of every write, ping and migration (milliseconds): connect timeout, server-side
   * `statement_timeout`, and a client-side read timeout slightly above it for a server that
   * stopped answering. Config default 5000 (`SLUICE_STORAGE_TIMEOUT_MS`).
   */
  readonly timeoutMs: number;
  /** Daily partitions kept ahead of today (days). Config default 3 (`SLUICE_PARTITIONS_AHEAD_DAYS`). */
  readonly partitionsAheadDays: number;
  /**
   * Raw retention (milliseconds): `migrate` creates daily partitions back to now − retention.
   * Config default 7 days (`SLUICE_RETENTION_RAW`).
   */
  readonly retentionRawMs: number;
  /**
   * `copy`: `COPY` straight into the tables; a batch holding an `(id, ts)` already stored is
   * written again by `COPY` into a staging table and `INSERT … SELECT … ON CONFLICT DO NOTHING`.
   * `unnest`: one `INSERT … SELECT FROM unnest($1::uuid[], …) ON CONFLICT DO NOTHING` per table.
   * Default `copy` (the benchmark's write-path rows compare them).
   */
  readonly writeMethod?: WriteMethod;
  /** Drives "today" for partitions and `schema_migrations.applied_at`. */
  readonly clock: Clock;
  /** Parent logger; the storage logs through a child tagged `component: storage`. */
  readonly logger: Logger;
  /**
   * Whether `writeRows` counts the rows it stores for the loss map (`SLUICE_OUTCOMES`, default
   * true; off only to measure what counting costs).
   */
  readonly outcomes?: boolean;
  /** Pool gauges and refused reads. Default: not exported. */
  readonly metrics?: StorageMetrics;
  /** The read standby's lag, state and routes (with `readConnectionString`). Default: not exported. */
  readonly standbyMetrics?: ReadStandbyMetrics;
}

export interface PostgresStorage extends Storage {
  readonly kind: 'postgres';
  /** The read standby; null without `readConnectionString`. */
  readonly readStandby: ReadStandby | null;
  /**
   * Creates missing daily partitions from today (UTC) to today + `partitionsAheadDays`. Idempotent
   * and safe from many processes at once. Inserts never depend on it: the default partition takes
   * rows no daily partition covers.
   */
  ensurePartitions(): Promise<void>;
}
