import { LOG_LEVELS } from '../log/logger';
import { bytes, duration, integer, nonEmpty, oneOf, postgresUrl } from './parsers';
import { setting } from './setting';

const MiB = 1024 * 1024;

/**
 * Settings of the collector core (HTTP, storage, lanes, writer, lifecycle), in
 * the order `--help` lists them. All defaults live in the settings files. Units: `_MS` milliseconds, `_BYTES` bytes.
 */
export const CORE_SETTINGS = {
  host: setting({
    env: 'SLUICE_HOST',
    default: '0.0.0.0',
    doc: 'Address to listen on; the default is every interface, so that apps on other hosts can send. Without API keys, reads, the console and `GET /pipeline` answer loopback clients only (`SLUICE_PROTECTED_MODE`).',
    parse: nonEmpty(),
  }),
  port: setting({ env: 'SLUICE_PORT', default: '8080', doc: 'HTTP port.', parse: integer(0, 65535) }),
  /** Whether the collector serves its read-only web console at `/` (on | off, default on). */
  console: setting({
    env: 'SLUICE_CONSOLE',
    default: 'on',
    doc: 'Serve the read-only web console at `/` (`on` | `off`). It reads through the read API and `GET /pipeline`; with API keys on it asks for a read key (docs/console.md).',
    parse: oneOf(['on', 'off'] as const),
  }),
  databaseUrl: setting({
    env: 'SLUICE_DATABASE_URL',
    doc: 'PostgreSQL URL (postgres://…). Unset: SQLite at SLUICE_SQLITE_PATH (tier 1).',
    parse: postgresUrl(),
  }),
  databaseReadUrl: setting({
    env: 'SLUICE_DATABASE_READ_URL',
    doc: 'PostgreSQL URL of a streaming-replication standby of SLUICE_DATABASE_URL that takes the reads (read API, console, `sluice query` / `tail`); writes, jobs and locks stay on the primary. A read first waits (up to 500 ms) until the standby has replayed what this collector acknowledged; a standby that is down, behind by more than SLUICE_READ_STANDBY_MAX_LAG_MS or slower than that wait sends the read to the primary (`X-Sluice-Read-Source` header). Unset: reads go to the primary.',
    parse: postgresUrl(),
  }),
  sqlitePath: setting({
    env: 'SLUICE_SQLITE_PATH',
    default: './data/sluice.db',
    doc: 'SQLite file used when SLUICE_DATABASE_URL is unset; its folder is created.',
    parse: nonEmpty(),
  }),
  sqliteCheckpoints: setting({
    env: 'SLUICE_SQLITE_CHECKPOINTS',
    default: 'thread',
    doc: "SQLite: where the write-ahead log is copied into the database file. `thread`: a worker thread with its own connection, so no commit on the event loop does it (the log may grow while the writer never pauses, up to SLUICE_SQLITE_WAL_MAX_BYTES). `commit`: SQLite's own, in the commit that leaves the log 1,000 pages long, on the event loop.",
    parse: oneOf(['thread', 'commit'] as const),
  }),
  sqliteWalMaxBytes: setting({
    env: 'SLUICE_SQLITE_WAL_MAX_BYTES',
    default: '64MiB',
    doc: "SQLite: size of the write-ahead log past which its checkpoint (in a worker thread) empties it while the writer waits; below it, checkpoints never hold the writer. Also the size the log's file is cut back to when the log starts again.",
    parse: bytes(MiB, 64 * 1024 * MiB),
  }),
  laneCapacity: setting({
    env: 'SLUICE_QUEUE_CAPACITY',
    default: '10000',
    doc: 'Standard lane capacity (events) for metric, log and lifecycle events.',
    parse: integer(1, 10_000_000),
  }),
  laneMaxBytes: setting({
    env: 'SLUICE_QUEUE_MAX_BYTES',
    default: '32MiB',
    doc: 'Standard lane capacity (bytes of events held in memory).',
    parse: bytes(1024, 64 * 1024 * MiB),
  }),
  errorLaneCapacity: setting({
    env: 'SLUICE_ERROR_QUEUE_CAPACITY',
    default: '2000',
    doc: 'Error lane capacity (events); drained before the standard lane.',
    parse: integer(1, 10_000_000),
  }),
  errorLaneMaxBytes: setting({
    env: 'SLUICE_ERROR_QUEUE_MAX_BYTES',
    default: '16MiB',
    doc: 'Error lane capacity (bytes).',
    parse: bytes(1024, 64 * 1024 * MiB),
  }),
  batchSize: setting({
    env: 'SLUICE_BATCH_SIZE',
    default: '2000',
    doc: 'Most events written in one storage transaction; at most `SLUICE_QUEUE_CAPACITY` (the default shrinks to a smaller queue).',
    parse: integer(1, 100_000),
  }),
  flushIntervalMs: setting({
    env: 'SLUICE_FLUSH_INTERVAL_MS',
    default: '50',
    doc: 'Longest an event waits for its batch to fill before it is written. With `SLUICE_ACK=stored` a batch is written at once whenever none is being written (its senders wait on the commit).',
    parse: duration(1, 60_000, 'ms'),
  }),
  writeConcurrency: setting({
    env: 'SLUICE_WRITE_CONCURRENCY',
    default: '3',
    doc: "Batches the writer has in flight at once, each in its own transaction on its own connection (PostgreSQL: the writer's pool has exactly this many): the next is taken while the database stores the last.",
    parse: integer(1, 16),
  }),
  ack: setting({
    env: 'SLUICE_ACK',
    default: 'queued',
    doc: '202 means: queued = in this collector’s bounded queue; stored = committed (group commit).',
    parse: oneOf(['queued', 'stored'] as const),
  }),
  ackTimeoutMs: setting({
    env: 'SLUICE_ACK_TIMEOUT_MS',
    default: '10000',
    doc: 'With SLUICE_ACK=stored: longest a request waits for its commit before 503.',
    parse: duration(1, 600_000, 'ms'),
  }),
  maxBodyBytes: setting({
    env: 'SLUICE_MAX_BODY_BYTES',
    default: '1MiB',
    doc: 'Largest request body, after decompression.',
    parse: bytes(1024, 256 * MiB),
  }),
  shedLagMs: setting({
    env: 'SLUICE_SHED_LAG_MS',
    default: '10',
    doc: "Queueing delay (the oldest ingest request's wait for a turn, or the event loop's standing lag) from which `POST /v1/events` is answered 429 `overloaded` before its body is read; `0`: never.",
    parse: duration(0, 60_000, 'ms'),
  }),
  maxEventsPerRequest: setting({
    env: 'SLUICE_MAX_EVENTS_PER_REQUEST',
    default: '1000',
    doc: 'Most events in one request.',
    parse: integer(1, 100_000),
  }),
  maxAttributes: setting({
    env: 'SLUICE_MAX_ATTRIBUTES',
    default: '32',
    doc: 'Most attributes on one event.',
    parse: integer(0, 1000),
  }),
  maxStringLength: setting({
    env: 'SLUICE_MAX_STRING_LENGTH',
    default: '1024',
    doc: 'Longest attribute value, error message or log message (characters).',
    parse: integer(16, 1_000_000),
  }),
  maxStackLength: setting({
    env: 'SLUICE_MAX_STACK_LENGTH',
    default: '16384',
    doc: 'Longest error stack (characters).',
    parse: integer(16, 10_000_000),
  }),
  maxJsonDepth: setting({
    env: 'SLUICE_MAX_JSON_DEPTH',
    default: '8',
    doc: 'Deepest nesting of arrays and objects in a body.',
    parse: integer(4, 64),
  }),
  maxFutureMs: setting({
    env: 'SLUICE_MAX_FUTURE_MS',
    default: '300000',
    doc: 'How far ahead of the collector clock an event ts may be (clock skew allowance).',
    parse: duration(0, 86_400_000, 'ms'),
  }),
  retentionRawMs: setting({
    env: 'SLUICE_RETENTION_RAW',
    default: '7d',
    doc: 'Raw event retention; older events are rejected at intake.',
    parse: duration(3_600_000, 3650 * 86_400_000, 'd'),
  }),
  partitionsAheadDays: setting({
    env: 'SLUICE_PARTITIONS_AHEAD_DAYS',
    default: '3',
    doc: 'PostgreSQL: daily partitions created ahead of today.',
    parse: integer(1, 60),
  }),
  pgWriteMethod: setting({
    env: 'SLUICE_PG_WRITE_METHOD',
    default: 'copy',
    doc: 'PostgreSQL write path: `copy` (COPY straight into the tables; a batch holding an already stored event is written again through a staging table with `ON CONFLICT DO NOTHING`) or `unnest` (`INSERT … SELECT FROM unnest` arrays `ON CONFLICT DO NOTHING`). Both store an `(id, ts)` once.',
    parse: oneOf(['copy', 'unnest'] as const),
  }),
  readPoolSize: setting({
    env: 'SLUICE_PG_READ_POOL_SIZE',
    default: '4',
    doc: 'PostgreSQL: connections of the read API (`GET /v1/events`, `/v1/metrics`). The writer has `SLUICE_WRITE_CONCURRENCY` connections of its own, the health check one, jobs their own: no read can hold them back.',
    parse: integer(1, 200),
  }),
  readTimeoutMs: setting({
    env: 'SLUICE_PG_READ_TIMEOUT_MS',
    default: '5000',
    doc: 'PostgreSQL: longest a read runs (its statement timeout; a read in batches, every batch together); a longer read is answered 503 `storage_busy`.',
    parse: duration(100, 600_000, 'ms'),
  }),
  readWaitMs: setting({
    env: 'SLUICE_PG_READ_WAIT_MS',
    default: '250',
    doc: 'PostgreSQL: longest a read waits for a free read connection (then 503 `storage_busy`) or to connect (then 503 `storage_unavailable`), with `Retry-After`.',
    parse: duration(1, 60_000, 'ms'),
  }),
  readSharePercent: setting({
    env: 'SLUICE_PG_READ_SHARE_PERCENT',
    default: '10',
    doc: 'PostgreSQL: ingest has precedence over reads on the primary. While the writer is pressed (a write in flight at least half of the last second), reads run one at a time and take at most this share of the time; a read waits its turn up to SLUICE_PG_READ_TIMEOUT_MS (then 503 `storage_busy`). 100: reads never yield. Reads on a standby (SLUICE_DATABASE_READ_URL) never wait.',
    parse: integer(1, 100),
  }),
  readStandbyMaxLagMs: setting({
    env: 'SLUICE_READ_STANDBY_MAX_LAG_MS',
    default: '10000',
    doc: 'With SLUICE_DATABASE_READ_URL: most replication lag at which the standby still takes reads; past it reads go to the primary until it catches up.',
    parse: duration(0, 3_600_000, 'ms'),
  }),
  storageTimeoutMs: setting({
    env: 'SLUICE_STORAGE_TIMEOUT_MS',
    default: '5000',
    doc: "Connect and statement timeout of every write, health check and migration; on SQLite, how long a statement waits for another connection's lock (the process waits with it).",
    parse: duration(100, 600_000, 'ms'),
  }),
  healthIntervalMs: setting({
    env: 'SLUICE_HEALTH_INTERVAL_MS',
    default: '1000',
    doc: 'How often storage reachability is checked in the background (drives /readyz).',
    parse: duration(50, 60_000, 'ms'),
  }),
  drainDelayMs: setting({
    env: 'SLUICE_DRAIN_DELAY_MS',
    default: '3000',
    doc: 'After SIGTERM: time /readyz answers 503 before the listener closes (let the load balancer notice).',
    parse: duration(0, 600_000, 'ms'),
  }),
  shutdownGraceMs: setting({
    env: 'SLUICE_SHUTDOWN_GRACE_MS',
    default: '5000',
    doc: 'After the listener closes: time requests in flight get to finish; then open connections are dropped (nothing on them was acknowledged).',
    parse: duration(0, 600_000, 'ms'),
  }),
  shutdownTimeoutMs: setting({
    env: 'SLUICE_SHUTDOWN_TIMEOUT_MS',
    default: '30000',
    doc: 'Longest a graceful shutdown may take before the process exits anyway (code 1); must exceed drain delay + grace.',
    parse: duration(100, 3_600_000, 'ms'),
  }),
  keepAliveTimeoutMs: setting({
    env: 'SLUICE_KEEP_ALIVE_TIMEOUT_MS',
    default: '65000',
    doc: 'Idle keep-alive timeout; keep it above the load balancer’s (HAProxy timeout http-keep-alive).',
    parse: duration(1000, 3_600_000, 'ms'),
  }),
  headersTimeoutMs: setting({
    env: 'SLUICE_HEADERS_TIMEOUT_MS',
    default: '10000',
    doc: 'Longest a client may take to send a request’s headers (then 408 and the connection closes). At most SLUICE_REQUEST_TIMEOUT_MS.',
    parse: duration(1000, 600_000, 'ms'),
  }),
  requestTimeoutMs: setting({
    env: 'SLUICE_REQUEST_TIMEOUT_MS',
    default: '30000',
    doc: 'Longest a client may take to send a whole request, headers and body (then 408 and the connection closes).',
    parse: duration(1000, 600_000, 'ms'),
  }),
  outcomes: setting({
    env: 'SLUICE_OUTCOMES',
    default: 'on',
    doc: 'Count what becomes of every event for the loss map (GET /v1/outcomes): on | off (off only to measure what counting costs).',
    parse: oneOf(['on', 'off'] as const),
  }),
  outcomesFlushMs: setting({
    env: 'SLUICE_OUTCOMES_FLUSH_MS',
    default: '1000',
    doc: 'How often the loss-map counts decided outside a data transaction (intake decisions, client reports, dead letters) are written.',
    parse: duration(50, 60_000, 'ms'),
  }),
  outcomesPendingHorizonMs: setting({
    env: 'SLUICE_OUTCOMES_PENDING_HORIZON',
    default: '1h',
    doc: 'How long after the end of its minute an event may still be pending in the loss map (an SDK retrying, the pipeline draining); past it what is still pending is counted as losses.unrecorded. In queue mode at least the stream’s own max age (twice SLUICE_NATS_MAX_AGE, at least an hour more).',
    parse: duration(60_000, 365 * 86_400_000, 'h'),
  }),
  logLevel: setting({
    env: 'SLUICE_LOG_LEVEL',
    default: 'info',
    doc: `Log level: ${LOG_LEVELS.join(', ')}.`,
    parse: oneOf(LOG_LEVELS),
  }),
} as const;
