/**
 * The event shapes of the wire contract (the collector's docs/ARCHITECTURE.md, "Wire contract"),
 * as the SDK sends them. The package stands alone, so the contract's primitives are declared here;
 * the collector's test/unit/sdk/wire-contract.test.ts keeps them equal to its own.
 */

/** The four kinds of event the wire contract knows, in priority order (lowest first). */
export const EVENT_TYPES = ['metric', 'log', 'lifecycle', 'error'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** An attribute value: the wire contract allows only flat scalars. */
export type AttributeValue = string | number | boolean;

/** Attributes of one event: a flat map of string → string | finite number | boolean, bounded. */
export type Attributes = Readonly<Record<string, AttributeValue>>;

/** An aggregated metric: every sample of one name and attribute set within one window. */
export interface MetricSummary {
  readonly count: number;
  readonly min: number;
  readonly max: number;
  readonly sum: number;
  readonly avg: number;
}

/** Who sent an event: `source` on the wire. */
export interface Source {
  readonly app: string;
  readonly version?: string;
  readonly env?: string;
}

/** The `error` field of an error event. */
export interface WireError {
  readonly message: string;
  readonly kind?: string;
  readonly stack?: string;
}

/** One event exactly as it goes on the wire. `(id, ts)` is fixed at capture and never changes on retry. */
export interface WireEvent {
  /** UUIDv7, lower-case. */
  readonly id: string;
  readonly type: EventType;
  /** Dotted identifier, e.g. `render.frame_drop`; aggregated metrics end in `_summary`. */
  readonly name: string;
  /** Milliseconds since the Unix epoch (integer). */
  readonly ts: number;
  readonly source: Source;
  /** A metric sample's value. */
  readonly value?: number;
  /** An aggregated metric's summary (instead of `value`). */
  readonly summary?: MetricSummary;
  /** Present on (and only on) error events. */
  readonly error?: WireError;
  /** A log event's text. */
  readonly message?: string;
  readonly attributes?: Attributes;
}
