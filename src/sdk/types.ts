/**
 * The event shapes of the wire contract (docs/ARCHITECTURE.md, "Wire contract (v1)"),
 * as the SDK sends them.
 */

// The contract's primitives are the collector's own (src/events/types.ts has no imports, so the
// SDK still bundles alone).
import type { Attributes, EventType, MetricSummary } from '../events/types';
export { EVENT_TYPES, type AttributeValue, type Attributes, type EventType } from '../events/types';

/** Who sent an event: `source` on the wire. */
export interface Source {
  readonly app: string;
  readonly version?: string;
  readonly env?: string;
}

/** An aggregated metric: every sample of one name and attribute set within one window. */
export type { MetricSummary };

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
