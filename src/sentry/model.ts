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
