import type { EventType, TelemetryEvent } from '../events/types';

/** Result of writing one batch. */
export interface WriteResult {
  /** Rows newly stored; the rest of the batch were duplicates of `(id, ts)` already stored. */
  readonly inserted: number;
  /**
   * True when a fast path met an `(id, ts)` already stored and the batch was written again through
   * the deduplicating path (PostgreSQL `copy`); the outcome is the same, the cost is higher.
   */
  readonly redoneForDuplicates?: boolean;
}

/** Filters of `GET /v1/events`. Times are epoch milliseconds; `from` inclusive, `to` exclusive. */
export interface EventQuery {
  readonly app?: string;
  readonly type?: EventType;
  readonly name?: string;
  readonly from?: number;
  readonly to?: number;
  /** Page size, already validated (1..1000). */
  readonly limit: number;
  /** Keyset position: return only events strictly older than this `(ts, id)`. */
  readonly before?: { readonly ts: number; readonly id: string };
}

/** One page, newest first. `next` is the keyset position of the last row when more may follow. */
export interface EventPage {
  readonly events: TelemetryEvent[];
  readonly next: { readonly ts: number; readonly id: string } | null;
}

export type MetricResolution = 'raw' | '1m' | '1h';

/** Filters of `GET /v1/metrics`. */
export interface MetricQuery {
  readonly name: string;
  readonly app?: string;
  readonly from?: number;
  readonly to?: number;
  readonly resolution: MetricResolution;
  /** Maximum points returned, already validated. */
  readonly limit: number;
}

/**
 * A raw sample (count 1), a summary, or a rollup bucket, oldest first. A bucket's `sum` (and so
 * `avg`) is ±Infinity when it left a double's range (see storage/layout/rollup-folds.ts); JSON
 * answers show it as null.
 */
export interface MetricPoint {
  readonly ts: number;
  readonly app: string;
  readonly count: number;
  readonly min: number;
  readonly max: number;
  readonly sum: number;
  readonly avg: number;
}

declare const storageRowBrand: unique symbol;

/**
 * An event in the form one storage writes it (PostgreSQL: its COPY line as bytes), made once when
 * the event is admitted and held by a lane until the commit: a couple of objects per queued event
 * for the garbage collector to move instead of the event's whole object graph, and a writer whose
 * synchronous work per batch is a concatenation. Opaque: only the storage that made it reads it.
 */
export interface StorageRow {
  readonly [storageRowBrand]: true;
}

/**
 * The storage port: the only thing the pipeline and the read API know about
 * the database. PostgreSQL and SQLite implement it with the same behaviour.
 */
export interface Storage {
  /** `postgres` or `sqlite`: for logs and metrics labels. */
  readonly kind: 'postgres' | 'sqlite';
  /** Applies pending migrations; safe to call from many processes at once. */
  migrate(): Promise<void>;
  /** `event` as `writeRows` takes it. Pure; throws nothing for a validated event. */
  toRow(event: TelemetryEvent): StorageRow;
  /**
   * Stores a batch of rows made by this storage's `toRow` in one transaction: all rows or none.
   * `(id, ts)` already present is skipped, not an error. Rejects on any storage failure; the
   * caller keeps the batch and retries.
   */
  writeRows(rows: readonly StorageRow[]): Promise<WriteResult>;
  /**
   * Reads reject with `StorageBusyError` (saturated with other reads) or `StorageUnavailableError`
   * (the database cannot serve now) when storage fails them, both answered 503 with Retry-After;
   * any other rejection is a fault of the query (a bug).
   */
  queryEvents(query: EventQuery): Promise<EventPage>;
  /** Rejects as `queryEvents` does. */
  queryMetrics(query: MetricQuery): Promise<MetricPoint[]>;
  /** Resolves when the database answers a trivial query; rejects otherwise. */
  ping(): Promise<void>;
  /** Idempotent. Waits for queries in flight, then releases connections. */
  close(): Promise<void>;
}
