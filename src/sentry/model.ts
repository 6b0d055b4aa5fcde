/**
 * The parts of a Sentry event payload the mapping reads (https://develop.sentry.dev/sdk/data-model/event-payloads/).
 * Every field is `unknown` until read: payloads come from clients.
 */
export interface SentryEvent {
  readonly event_id?: unknown;
  /** Seconds since the epoch (a number, fractions allowed) or an RFC 3339 text. */
  readonly timestamp?: unknown;
  /** `fatal | error | warning | info | debug`; absent: `error`. */
  readonly level?: unknown;
  readonly logger?: unknown;
  readonly transaction?: unknown;
  readonly platform?: unknown;
  readonly server_name?: unknown;
  readonly release?: unknown;
  readonly environment?: unknown;
  /** A text, or an object with `formatted`/`message` (older SDKs). */
  readonly message?: unknown;
  readonly logentry?: unknown;
  /** `{values: [...]}`, or the list itself (older SDKs). */
  readonly exception?: unknown;
  /** `{key: value}`, or a list of `[key, value]` pairs. */
  readonly tags?: unknown;
  /** `{name: {field: value}}`: `os`, `runtime`, `trace`, … */
  readonly contexts?: unknown;
}

export interface SentryException {
  readonly type?: unknown;
  readonly value?: unknown;
  readonly module?: unknown;
  readonly stacktrace?: unknown;
}

export interface SentryFrame {
  readonly function?: unknown;
  readonly module?: unknown;
  readonly filename?: unknown;
  readonly abs_path?: unknown;
  readonly lineno?: unknown;
  readonly colno?: unknown;
}

/** The parts of a `transaction` item the mapping reads (an event payload with `type: transaction`). */
export interface SentryTransaction {
  readonly event_id?: unknown;
  /** Its end: seconds since the epoch or an RFC 3339 text. */
  readonly timestamp?: unknown;
  /** Its start, as `timestamp`. */
  readonly start_timestamp?: unknown;
  /** Its name (`GET /users/:id`, `checkout`). */
  readonly transaction?: unknown;
  readonly release?: unknown;
  readonly environment?: unknown;
  /** `trace`: the transaction's own span (`op`, `status`, `trace_id`, `span_id`). */
  readonly contexts?: unknown;
  /** Its child spans (`SentrySpan`). */
  readonly spans?: unknown;
}

/** A span: a transaction's `contexts.trace`, or a standalone `span` item. */
export interface SentrySpan {
  readonly span_id?: unknown;
  readonly trace_id?: unknown;
  readonly op?: unknown;
  readonly status?: unknown;
  readonly description?: unknown;
  readonly start_timestamp?: unknown;
  readonly timestamp?: unknown;
  /** Standalone spans: `sentry.release`, `sentry.environment`, `sentry.segment.name`, … */
  readonly data?: unknown;
}

/** A span of span streaming (`span` items `{version: 2, items: [...]}`). */
export interface SentryStreamedSpan {
  readonly name?: unknown;
  readonly span_id?: unknown;
  readonly trace_id?: unknown;
  /** Seconds since the epoch. */
  readonly start_timestamp?: unknown;
  readonly end_timestamp?: unknown;
  /** True for the span that is the transaction (the segment). */
  readonly is_segment?: unknown;
  /** `ok | error`. */
  readonly status?: unknown;
  /** `{key: {value, type}}`: `sentry.op`, `sentry.release`, `sentry.environment`, `sentry.segment.name`, … */
  readonly attributes?: unknown;
}
