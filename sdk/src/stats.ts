import type { EventType } from './types';

/** Why an event did not reach the collector. */
export type DropReason =
  /** Sampled out: the static rate, or the dynamic one (never errors). */
  | 'sampled'
  /** Evicted by the priority drop of a full buffer. */
  | 'buffer_full'
  /** The collector rejected it as invalid (its index in `rejected`). */
  | 'rejected'
  /** Its batch got a 4xx other than 429 (400, 401, 413, 415): resending could not help. */
  | 'client_error'
  /** Refused at capture: a name that is not a dotted identifier, a value that is not a finite number. */
  | 'invalid'
  /** Captured after `close()`. */
  | 'closed';

export const DROP_REASONS: readonly DropReason[] = [
  'sampled',
  'buffer_full',
  'rejected',
  'client_error',
  'invalid',
  'closed',
];

/** A snapshot of the client's state, for dashboards and tests. */
export interface ClientStats {
  /** Dynamic sampling rate, in (0, 1]: the collector's advice, or without it 1, 0.5 or 0.1 (lowered by 429s, restored by successes). */
  readonly dynamicRate: number;
  /** Share of non-error events kept: static `sampleRate` × `dynamicRate`. Errors keep the static rate. */
  readonly effectiveRate: number;
  /** Consecutive successful requests counted towards the next step up of `dynamicRate`. */
  readonly successStreak: number;
  /** Events waiting in the buffer, per type and in total, with their estimated size (characters). */
  readonly buffered: Readonly<Record<EventType, number>> & { readonly total: number; readonly bytes: number };
  /** Metric series with an open aggregation window. */
  readonly aggregating: number;
  /** Events in requests not yet answered. */
  readonly inFlight: number;
  /** Events captured (after sampling) since start, summaries counting one each. */
  readonly captured: number;
  /** Events the collector took (2xx, or not throttled nor rejected in a 429), and beacons sent. */
  readonly sent: number;
  /** Events lost, by reason. */
  readonly dropped: Readonly<Record<DropReason, number>>;
  /** Requests answered 2xx, 429, other failure (network, 5xx, 4xx). */
  readonly requests: { readonly succeeded: number; readonly throttled: number; readonly failed: number };
  /**
   * Consecutive requests that made no progress (network error, timeout, 408,
   * 5xx, or a 429 that took nothing): the backoff exponent.
   */
  readonly consecutiveFailures: number;
  /** No request starts before this time (ms since the epoch; `Retry-After` or backoff), or null. */
  readonly retryAt: number | null;
  /** Unexpected errors caught inside the SDK (a throwing transport, store or clock). */
  readonly internalErrors: number;
  /** Set when the options could not make a working client: why it does nothing. */
  readonly disabled?: string;
}
