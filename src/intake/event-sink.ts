import type { EventType, TelemetryEvent } from '../events/types';
import type { OutcomeOrigin } from '../loss-map/outcome';
import type { StorageRow } from '../storage/port';

/** The two lanes of every sink: errors (the fast lane, never rate-limited) and the rest. */
export type LaneName = 'error' | 'standard';

/**
 * One valid event as a sink takes it: typed (`event`), or already written by the single pass
 * (`row`, events/scan/) as what this sink holds (`Row`: a storage row for the lanes, a message
 * element for JetStream), with what intake reads of it either way.
 */
export interface SinkItem<Row = StorageRow> {
  readonly type: EventType;
  readonly app: string;
  /** Lower-case UUID. */
  readonly id: string;
  /** Milliseconds since the Unix epoch. */
  readonly ts: number;
  /** Estimated in-memory size (bytes). */
  readonly bytes: number;
  /** The typed event; null when the single pass wrote `row` straight from the body. */
  readonly event: TelemetryEvent | null;
  /** The event as the sink holds it, when the single pass made it; null: the sink makes it from `event`. */
  readonly row: Row | null;
}

export type SinkAnswer =
  | {
      readonly admitted: true;
      /**
       * When the events are durable as `SLUICE_ACK` promises, if that is
       * later than now (group commit): resolves true then, or false if it
       * cannot happen in time.
       */
      readonly durable?: Promise<boolean>;
      /**
       * With `durable`: resolves once every event is stored or refused by storage, however late
       * (never for events a forced shutdown drops). The loss map counts a request whose
       * acknowledgement timed out as accepted then.
       */
      readonly settled?: Promise<void>;
    }
  | { readonly admitted: false; readonly reason: 'queue_full'; readonly retryAfterSeconds: number }
  | { readonly admitted: false; readonly reason: 'unavailable'; readonly retryAfterSeconds: number };

/**
 * Where admitted events go: this process's bounded lanes (tiers 1–3) or a
 * JetStream stream (tier 4). `offer` takes all of `items` or none and never
 * waits for room.
 */
export interface EventSink<Row = StorageRow> {
  /** `origin`: the loss map's origin of the request that brought `items` (`sdk`, `direct`). */
  offer(
    lane: LaneName,
    items: readonly SinkItem<Row>[],
    now: number,
    origin: OutcomeOrigin,
  ): Promise<SinkAnswer>;
  /**
   * When `lane` has no room for `events` more now: how long until it may. Null when it has room
   * (which `offer` still decides for good). Optional: a sink without a cheap answer leaves it out.
   */
  cannotAdmit?(lane: LaneName, events: number): { readonly retryAfterSeconds: number } | null;
  /** False when the sink knows it cannot take events now (e.g. storage down with SLUICE_ACK=stored). */
  admitting(): boolean;
}
