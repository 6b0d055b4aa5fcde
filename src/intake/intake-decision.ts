import type { EventType } from '../events/types';
import type { RejectionReason } from '../events/rejection';
import type { OutcomeSubject } from '../loss-map/event-outcomes';
import type { OutcomeOrigin } from '../loss-map/outcome';
import type { LimiterStore } from '../ratelimit/event-rate-limiter';
import type { StorageRow } from '../storage/port';
import type { LaneName, SinkItem } from './event-sink';
import type { IntakeAnswer } from './intake-answer';

/** A valid event of a request, as the sink admits it, with its index in the request. */
export interface Candidate<Row = StorageRow> extends SinkItem<Row> {
  readonly index: number;
}

/** The metrics label of an event's type: a bounded set (`unknown` for a type that is not ours). */
export type TypeLabel = EventType | 'unknown';

/** An event a rule refused. */
export interface RejectedEvent {
  readonly reason: RejectionReason;
  readonly label: TypeLabel;
  /** Its loss-map key, under the app the refusal is counted for (`IntakeDecider.refusedApp`). */
  readonly subject: OutcomeSubject;
  readonly origin: OutcomeOrigin;
}

/** The rate limit's verdict on one app of a request. */
export interface LimitVerdict {
  readonly result: 'allowed' | 'limited' | 'partial';
  readonly store: LimiterStore;
}

/** Events offered to one lane together, and the sink's answer: all of them admitted, or none. */
export interface LaneOffer {
  readonly lane: LaneName;
  readonly candidates: readonly Candidate<unknown>[];
  /** Null when admitted; else why not. */
  readonly refused: 'queue_full' | 'unavailable' | null;
  /** Admitted on a durable acknowledgement (`SinkAnswer.durable`): settled once storage has them, however late. */
  readonly durable: {
    readonly committed: Promise<boolean>;
    readonly settled: Promise<void> | undefined;
  } | null;
}

/**
 * What intake decided for one request, as a plain value: the answer, and every fact the recorders
 * (Prometheus counts, app activity, the loss map) read, so that none of them lives in the loop that
 * decides. Lists are in request order where the loss map's keys depend on it.
 */
export interface IntakeDecision {
  /** What the front answers. */
  readonly answer: IntakeAnswer;
  readonly now: number;
  /** The loss map's origin of the request (`sdk`, `direct`). */
  readonly origin: OutcomeOrigin;
  /** `storage_unavailable` when the request was answered 503 for it; else null. */
  readonly requestRefused: 'storage_unavailable' | null;
  /** Valid events that passed the app rules, per type. */
  readonly received: Readonly<Record<EventType, number>>;
  readonly rejected: readonly RejectedEvent[];
  /** Non-error events throttled unread (`queue_full`) because the standard lane had no room for them. */
  readonly unread: readonly OutcomeSubject[];
  /** One per app the rate limiter was asked about. */
  readonly limits: readonly LimitVerdict[];
  /** Events their app's rate limit refused (with a whole request's errors when every app of it was). */
  readonly overLimit: readonly Candidate<unknown>[];
  /** How the loss map counts `overLimit`: a whole request's refused apps are refused for good. */
  readonly overLimitOutcome: 'throttled' | 'rejected';
  readonly offers: readonly LaneOffer[];
  /** Whether every durable acknowledgement of `offers` came in time. */
  readonly durableInTime: boolean;
}

const NO_EVENTS: Readonly<Record<EventType, number>> = { error: 0, lifecycle: 0, metric: 0, log: 0 };

/** The decision of a request refused before any of its events was read. */
export function refusedUnread(
  answer: IntakeAnswer,
  now: number,
  origin: OutcomeOrigin,
  requestRefused: IntakeDecision['requestRefused'],
): IntakeDecision {
  return {
    answer,
    now,
    origin,
    requestRefused,
    received: NO_EVENTS,
    rejected: [],
    unread: [],
    limits: [],
    overLimit: [],
    overLimitOutcome: 'throttled',
    offers: [],
    durableInTime: true,
  };
}
