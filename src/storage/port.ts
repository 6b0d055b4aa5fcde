import type { EventType, TelemetryEvent } from '../events/types';
import type { OutcomeBatch, OutcomeOrigin, OutcomeQuery, OutcomeRow, StoredGroup } from '../loss-map/outcome';
import type { ScannedEvent } from '../events/scan/scanned-event';

/** Result of writing one batch. */
export interface WriteResult {
  /** Rows newly stored; the rest of the batch were duplicates of `(id, ts)` already stored. */
  readonly inserted: number;
  /**
   * True when a fast path met an `(id, ts)` already stored and the batch was written again through
   * the deduplicating path (PostgreSQL `copy`); the outcome is the same, the cost is higher.
   */
  readonly redoneForDuplicates?: boolean;
  /**
   * The rows newly stored per (app, minute, type), when the write may have skipped duplicates and
   * counted what it stored (the loss map on): the writer counts the rest of the batch as
   * `duplicate` (loss-map/duplicates.ts). Absent when every row went in or nothing was counted.
   */
  readonly storedBy?: readonly StoredGroup[];
}

/**
 * Equality on one attribute, compared as text: a string as it is, a number as JSON writes it
 * (`500`, `1.5`), a boolean as `true` / `false`.
 */
export interface AttributeFilter {
  readonly key: string;
  readonly value: string;
}

/** Filters of the event reads. Times are epoch milliseconds; `from` inclusive, `to` exclusive. */
export interface EventFilters {
  readonly app?: string;
  readonly type?: EventType;
  readonly name?: string;
  readonly env?: string;
  readonly version?: string;
  /** Every one must hold. */
  readonly attributes?: readonly AttributeFilter[];
  /** Case-insensitive substring of the message or the error message (SQLite: ASCII case only). */
  readonly text?: string;
  readonly from?: number;
  readonly to?: number;
}

/** Filters of `GET /v1/events`. */
export interface EventQuery extends EventFilters {
  /** Page size, already validated (1..1000). */
  readonly limit: number;
  /** Keyset position: return only events strictly older than this `(ts, id)`. */
  readonly before?: { readonly ts: number; readonly id: string };
  /**
   * Most rows of each table one page reads when a filter is not served by an index (the page's
   * "scan bound"): the page then holds the matches among them, and `next` continues below them.
   * Absent: no bound (every matching row may be read to fill the page).
   */
  readonly scanLimit?: number;
}

/**
 * One page, newest first. `next` is the keyset position to continue from when more may follow: the
 * last event of a full page, or, on a page cut short by its scan bound, the oldest row it read
 * (such a page may hold fewer than `limit` events, or none).
 */
export interface EventPage {
  readonly events: TelemetryEvent[];
  readonly next: { readonly ts: number; readonly id: string } | null;
}

export type MetricResolution = 'raw' | '1m' | '1h';

/**
 * A keyset position in a metric read, oldest first: raw points by `(ts, id)`, rolled-up points by
 * `(bucket, app)`; `key` is the id or the app.
 */
export interface MetricPosition {
  readonly ts: number;
  readonly key: string;
}

/** Filters of `GET /v1/metrics`. */
export interface MetricQuery {
  /** Stored names read together (a metric and its SDK summaries: see src/read/metric-names.ts). */
  readonly names: readonly string[];
  readonly app?: string;
  readonly from?: number;
  readonly to?: number;
  readonly resolution: MetricResolution;
  /** Maximum points returned, already validated. */
  readonly limit: number;
  /** Return only points strictly after this position. */
  readonly after?: MetricPosition;
}

/**
 * A raw sample (count 1) or a summary, or at 1m / 1h one bucket of one app (the names' rows merged),
 * oldest first. A bucket's `sum` (and so `avg`) is ±Infinity when it left a double's range (see
 * storage/layout/rollup-folds.ts); JSON answers show it as null.
 */
export interface MetricPoint {
  readonly ts: number;
  readonly app: string;
  readonly count: number;
  readonly min: number;
  readonly max: number;
  readonly sum: number;
  readonly avg: number;
  /** Raw points only: a sample (a value) or a summary (count, min, max, sum), by the row's shape. */
  readonly kind?: 'sample' | 'summary';
}

/** One page of points, oldest first; `next` is set when more may follow (the page is full). */
export interface MetricPage {
  readonly points: MetricPoint[];
  readonly next: MetricPosition | null;
}

/**
 * A page of a list of names (apps, metric names), in the database's order of names, found by a
 * skip scan of an index per source: `after` continues from a cursor, `prefix` searches.
 */
export interface NameListQuery {
  /** Window [from, to) in which a name must have data to be listed. */
  readonly from: number;
  readonly to: number;
  /** Only names after this one (a page's `next`). */
  readonly after?: string;
  /** Only names that start with this. */
  readonly prefix?: string;
  /** Most names in the page. */
  readonly limit: number;
  /**
   * Most distinct names each index path visits for one page: names without data in the window
   * are skipped, and a page that reached this holds those found so far, its `next` continuing
   * after the last name visited (it may hold fewer than `limit`, or none).
   */
  readonly scanLimit: number;
}

/** Filters of `GET /v1/apps`. */
export interface AppsQuery extends NameListQuery {
  /** Most non-metric events counted per app; a count that reaches it is reported as capped. */
  readonly countLimit: number;
  /** Most 1h rollup rows summed per app for its samples; more is reported as capped. */
  readonly sampleRowsLimit: number;
}

/** What storage knows of one app's activity in a window. */
export interface AppActivityRow {
  readonly app: string;
  /** `ts` of the newest non-metric event before `to`; null when it has none in the window. */
  readonly lastEventTs: number | null;
  /** Non-metric events in the window, at most `countLimit`. */
  readonly events: number;
  readonly eventsCapped: boolean;
  /** Start of the newest minute holding metric samples in the window; null when none. */
  readonly lastMetricMinute: number | null;
  /** Metric samples (a summary counts as its count) in the 1h rollups of the hours the window touches. */
  readonly metricSamples: number;
  /** True when the app had more than `sampleRowsLimit` rollup rows: `metricSamples` counts the first. */
  readonly metricSamplesCapped: boolean;
}

/** A page of apps; `next` is set when more may follow. */
export interface AppsPage {
  readonly apps: AppActivityRow[];
  readonly next: string | null;
}

/** Filters of `GET /v1/metrics/names`: stored names (a series of summaries is `<name>_summary`). */
export interface MetricNamesQuery extends NameListQuery {
  readonly app?: string;
  /** Most apps listed per name (without `app`), and most rollup rows read to find them. */
  readonly appsPerName: number;
  readonly rowsPerName: number;
}

/** One stored metric name with data in a window. */
export interface StoredMetricName {
  readonly name: string;
  /** Shape of the first raw row of its newest bucket; null when no raw row is left (purged). */
  readonly kind: 'sample' | 'summary' | null;
  /** Apps that wrote it in the window (the query's app only, when it has one), in order. */
  readonly apps: string[];
  /** True when more apps may have written it than `apps` lists. */
  readonly appsCapped: boolean;
}

/** A page of stored metric names; `next` is set when more may follow. */
export interface MetricNamesPage {
  readonly names: StoredMetricName[];
  readonly next: string | null;
}

/** Filters of a probe of one stored metric name (`Storage.queryMetricName`). */
export interface MetricNameQuery {
  readonly name: string;
  readonly app?: string;
  readonly from: number;
  readonly to: number;
  readonly appsPerName: number;
  readonly rowsPerName: number;
}

/** Filters of `GET /v1/errors/groups`. */
export interface ErrorScanQuery {
  readonly app?: string;
  readonly env?: string;
  readonly version?: string;
  readonly from?: number;
  readonly to?: number;
  /** Most error events read (newest first); older ones are left out and the scan says where it stopped. */
  readonly scanLimit: number;
}

/** Error events of one app with one exact (kind, message), aggregated. */
export interface ErrorMessageRow {
  readonly app: string;
  readonly kind: string | null;
  readonly message: string;
  readonly count: number;
  readonly firstTs: number;
  readonly lastTs: number;
  /** Id of the newest of them (ties on `ts`: the highest id). */
  readonly lastId: string;
}

/** Takes a page of a read's rows, in the read's order; the next page is read once its promise resolves. */
export type RowSink<T> = (rows: readonly T[]) => Promise<void> | void;

export interface ErrorScan {
  readonly rows: ErrorMessageRow[];
  /**
   * When the scan bound was reached: the `ts` of the oldest error read (the rows cover errors at
   * or after it; older ones exist). Null when every error of the window was read.
   */
  readonly boundTs: number | null;
}

/**
 * What `deleteAppData` removes: every row of `app` (events, metric samples, both rollups, pending
 * rollup invalidations), or only what is older than `before`, or only the event(s) with `id`.
 */
export type AppDataDeletion =
  | { readonly app: string; readonly scope: 'all' }
  | { readonly app: string; readonly scope: 'before'; readonly before: number }
  | { readonly app: string; readonly scope: 'id'; readonly id: string };

/** Rows removed by `deleteAppData`, per table. */
export interface DeletedRows {
  readonly events: number;
  readonly metricSamples: number;
  readonly rollups1m: number;
  readonly rollups1h: number;
  /**
   * The app's loss-map rows removed (none for one event: it stays counted as stored). What they
   * left pending is written back as one row per minute and type (docs/ARCHITECTURE.md, "The loss map").
   */
  readonly lossMapRows: number;
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
   * An event the single pass validated (events/scan/), written from the body's bytes as the row
   * `toRow` makes of the same event typed, byte for byte. Absent when this storage's rows are not
   * made that way (requests then take the typed path).
   */
  readonly rowFromScan?: (body: Uint8Array, event: ScannedEvent) => StorageRow;
  /**
   * Stores a batch of rows made by this storage's `toRow`: on PostgreSQL in one transaction, all
   * rows or none; on SQLite in short transactions one after the other (sqlite/write.ts), so a
   * failure may leave the first ones stored, and writing the same rows again counts them once.
   * Resolves once every row is committed. `(id, ts)` already present is skipped, not an error.
   * Rejects on any storage failure; the caller keeps the batch and retries. `origins[i]`, when
   * given, is row `i`'s loss-map origin: PostgreSQL keeps it with a metric sample's block, so a
   * resent sample removed later is counted under its copy's origin (migration 012).
   */
  writeRows(rows: readonly StorageRow[], origins?: readonly OutcomeOrigin[]): Promise<WriteResult>;
  /**
   * Ends the writes in flight now (a forced shutdown): their connections are closed, so the server
   * rolls back each transaction whose `COMMIT` it has not received, and each `writeRows` rejects.
   * Absent where a write is never in flight across a wait (SQLite writes synchronously).
   */
  readonly cutWrites?: () => void;
  /**
   * Reads reject with `StorageBusyError` (saturated with other reads) or `StorageUnavailableError`
   * (the database cannot serve now) when storage fails them, both answered 503 with Retry-After;
   * any other rejection is a fault of the query (a bug).
   */
  queryEvents(query: EventQuery): Promise<EventPage>;
  /** Rejects as `queryEvents` does; so do the reads below. */
  queryMetrics(query: MetricQuery): Promise<MetricPage>;
  /**
   * A page of the apps seen in a window: events indexed by app, metrics through the rollups and the
   * invalidation log (layout/activity-sql.ts).
   */
  queryApps(query: AppsQuery): Promise<AppsPage>;
  /** A page of the stored metric names seen in a window, of one app or all (layout/activity-sql.ts). */
  queryMetricNames(query: MetricNamesQuery): Promise<MetricNamesPage>;
  /** One stored metric name in a window, or null when it has no data there (the names' summaries). */
  queryMetricName(query: MetricNameQuery): Promise<StoredMetricName | null>;
  /**
   * The newest error events of a window (at most `scanLimit`), aggregated by app, kind and message.
   * With `onRows`, the rows are handed to it a page at a time as they are read (the next page read
   * once its promise resolved) and the scan's `rows` is empty: a read of 20,000 rows never holds
   * them all (docs/ARCHITECTURE.md, "Bounded reads").
   */
  scanErrors(query: ErrorScanQuery, onRows?: RowSink<ErrorMessageRow>): Promise<ErrorScan>;
  /**
   * Writes counts of the loss map in one transaction (docs/ARCHITECTURE.md, "The loss map"): the
   * counts, and each client report's counts unless a report of its id was stored before. Rejects
   * on any storage failure; the caller keeps the batch and retries. (`stored` is not written here:
   * `writeRows` counts it in its own transaction.)
   */
  writeOutcomes(batch: OutcomeBatch): Promise<void>;
  /**
   * The loss map's counts of one app in a window, summed per minute, type, outcome, reason and
   * origin, oldest minute first. With `onRows`, handed to it a page at a time as `scanErrors`
   * does, and the result is empty.
   */
  queryOutcomes(query: OutcomeQuery, onRows?: RowSink<OutcomeRow>): Promise<OutcomeRow[]>;
  /**
   * Deletes an app's data in one transaction (a privacy request: `sluice delete`). Rollup buckets
   * that held deleted samples go with them; a bucket that also holds data that stays (the one
   * holding `before`, or one an `id` shared) is deleted and logged as invalidated, so the next
   * downsample run recomputes it from what is left. Samples older than the raw retention are gone
   * already, so such a bucket may come back smaller than before: never larger.
   */
  deleteAppData(deletion: AppDataDeletion): Promise<DeletedRows>;
  /** Resolves when the database answers a trivial query; rejects otherwise. */
  ping(): Promise<void>;
  /** Idempotent. Waits for queries in flight, then releases connections. */
  close(): Promise<void>;
}
