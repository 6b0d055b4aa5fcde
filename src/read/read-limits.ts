/**
 * The bounds of the read API: what one request may ask for and read. Each read is bounded by an
 * index range or by one of these (docs/ARCHITECTURE.md, "The read side").
 */
export const READ_LIMITS = {
  /** `GET /v1/events`: largest page, and the page when `limit` is absent. */
  maxEventsPage: 1000,
  defaultEventsPage: 100,
  /**
   * `GET /v1/events`: most bytes of an answer (1 MiB). A page whose events would make it longer
   * ends before the event that would, its cursor after its last event (a page holds at least one
   * event: the contract bounds an event to about 60 KB), so an answer is never serialised whole
   * past this.
   */
  maxEventsPageBytes: 1_048_576,
  /**
   * `GET /v1/events`: most rows of each table a page reads when a filter is not served by an
   * index (env, version, attributes, text, a second equality, an app on metrics).
   */
  eventsScanRows: 10_000,
  /** `GET /v1/events`: most `attr.<key>` filters, and the longest key (the wire contract's). */
  maxAttributeFilters: 4,
  maxAttributeKeyLength: 64,
  /** `GET /v1/metrics`: most points in one page, and the page when `limit` is absent. */
  maxMetricPoints: 10_000,
  defaultMetricPoints: 1000,
  /** `GET /v1/apps`, `GET /v1/metrics/names`, `GET /v1/error-groups`: window when `from` is absent (ms). */
  defaultWindowMs: 24 * 3_600_000,
  /** `GET /v1/apps`, `GET /v1/metrics/names`: largest page, and the page when `limit` is absent. */
  maxListPage: 1000,
  defaultListPage: 100,
  /**
   * `GET /v1/apps`, `GET /v1/metrics/names`: most distinct names each source's index is read for in
   * one page, as a multiple of the page's `limit` (names without data in the window are skipped;
   * past it the page ends early, its cursor after the last name read).
   */
  listScanPerName: 4,
  /** `GET /v1/apps`: most non-metric events counted per app, and most 1h rollup rows summed per app. */
  appEventCountLimit: 10_000,
  appSampleRowsLimit: 10_000,
  /** `GET /v1/metrics/names`: most apps listed per name, and most rollup rows read to find them. */
  appsPerName: 100,
  rowsPerName: 1000,
  /** `GET /v1/error-groups`: most error events read (the newest). */
  errorScanRows: 20_000,
  /** `GET /v1/error-groups`: most apps listed per group (`app_count` says how many there are). */
  appsPerErrorGroup: 10,
  /** `GET /v1/outcomes`: window when `from` is absent, and the widest window (ms). */
  defaultOutcomeWindowMs: 3_600_000,
  maxOutcomeWindowMs: 31 * 24 * 3_600_000,
  /**
   * `GET /v1/outcomes?by=minute`: the widest window (ms). An answer holds a loss map per minute
   * (about 300 bytes each): a day of them is some 400 KB, a month would be over 10 MB.
   */
  maxOutcomeMinutesWindowMs: 24 * 3_600_000,
  /** Longest text parameter (an app, a name, a value). */
  maxTextLength: 128,
  maxSearchLength: 256,
  /**
   * Longest a read waits for this collector's writer to commit the events it acknowledged before
   * the read (milliseconds; the read barrier, `http/read-barrier.ts`). A commit takes a few
   * milliseconds; past this the database is slow or away, and the read goes ahead (and answers 503
   * when storage cannot serve it).
   */
  barrierTimeoutMs: 500,
} as const;
