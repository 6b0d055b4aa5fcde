/** The four kinds of event the wire contract knows, in priority order (lowest first). */
export const EVENT_TYPES = ['metric', 'log', 'lifecycle', 'error'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** An attribute value: the wire contract allows only flat scalars. */
export type AttributeValue = string | number | boolean;

/**
 * Attributes of one event. Always a null-prototype object, so keys such as
 * `__proto__` can never reach `Object.prototype`.
 */
export type Attributes = Readonly<Record<string, AttributeValue>>;

/** An SDK-side aggregate of metric samples of one name within a window. */
export interface MetricSummary {
  readonly count: number;
  readonly min: number;
  readonly max: number;
  readonly sum: number;
  readonly avg: number;
}

export interface ErrorDetail {
  readonly message: string;
  readonly kind: string | null;
  readonly stack: string | null;
}

/**
 * One validated, normalised event: what every layer below HTTP handles.
 * `(id, ts)` is its identity: storing it twice stores it once.
 */
export interface TelemetryEvent {
  /** UUID chosen by the SDK, lower-case. */
  readonly id: string;
  readonly type: EventType;
  /** Dotted identifier, e.g. `render.frame_drop`. */
  readonly name: string;
  /** Milliseconds since the Unix epoch. */
  readonly ts: number;
  readonly app: string;
  readonly version: string | null;
  readonly env: string | null;
  /** A metric sample's value; null for summaries and other types. */
  readonly value: number | null;
  /** An aggregated metric's summary; null otherwise. */
  readonly summary: MetricSummary | null;
  /** Present on (and only on) `error` events. */
  readonly error: ErrorDetail | null;
  /** Free text of a `log` event (optional for other types). */
  readonly message: string | null;
  readonly attributes: Attributes;
}
