/*
 * The vocabulary of the loss map (docs/ARCHITECTURE.md, "The loss map"): what became of events,
 * counted per (app, minute of the event's `ts`, type, outcome, reason, origin).
 */

/**
 * What became of events, by where it was decided:
 * - `captured`, `sdk_dropped`, `sdk_delivered`, `sdk_rejected`: an SDK's client report (what it
 *   captured; lost before sending, by reason; taken by a collector; rejected by a collector, by reason);
 * - `sdk_samples_dropped`: samples of an aggregated metric an SDK lost before folding them into a
 *   summary, by reason; counted in samples, outside the identity (the summary is the event);
 * - `accepted`, `rejected`, `throttled`: a collector's intake (throttled is not final: the sender
 *   may send them again);
 * - `stored`: rows really inserted, counted in the transaction that inserts them;
 * - `duplicate`: events a writer's transaction skipped because their `(id, ts)` was stored already
 *   (a body sent again), reason `duplicate`, with the origin of the request that brought the copy;
 *   counted by the writer after the commit (loss-map/duplicates.ts);
 * - `refused`: the database refused the row for good (the writer dropped it);
 * - `dead_lettered`: a worker moved the event to the dead-letter subject;
 * - `expired`: a worker took the event's message from the stream, on its first delivery, older
 *   than `SLUICE_NATS_MAX_AGE` (reason `max_age`) and acked it unwritten;
 * - `dropped`: held by a collector (tiers 1–3) when its shutdown took the forced path, by reason
 *   (`shutdown_timeout`, `second_signal`, `shutdown_error`): counted and written before it exits.
 *   A tier-4 worker drops nothing (what it did not ack is delivered again);
 * - `shed`: requests (not events) refused unread (429 `overloaded`), per minute of receipt, with
 *   type `''` and reason `overloaded`; the app is the one of the request's ingest key when it
 *   presented a valid one, else `''`. Outside the identity: nothing of them was read, and their
 *   sender sends them again.
 */
export const OUTCOMES = [
  'captured',
  'sdk_dropped',
  'sdk_delivered',
  'sdk_rejected',
  'sdk_samples_dropped',
  'accepted',
  'rejected',
  'throttled',
  'stored',
  'duplicate',
  'refused',
  'dead_lettered',
  'expired',
  'dropped',
  'shed',
] as const;

export type OutcomeName = (typeof OUTCOMES)[number];

/**
 * Who sent the events: `sdk` when the request carried a client report (its events' fate before
 * the collector is in the reports), `direct` otherwise (OTLP, curl: the map starts at the collector),
 * `''` where it is not known (counted at write).
 */
export type OutcomeOrigin = 'sdk' | 'direct' | '';

/**
 * The app of counts that no app passing the app-name rule (events/app-name.ts) can be told for: a
 * refused event whose `source.app` is missing or breaks the rule, a request shed unread without a
 * valid ingest key, the events and report rows of apps the bound on distinct apps refuses. No
 * event can name it (an app name is never empty), and `GET /v1/outcomes?app=` reads it.
 */
export const NO_APP = '';

/** One count of the loss map. */
export interface OutcomeCount {
  readonly app: string;
  /**
   * Start of the UTC minute of the events' `ts` (epoch ms); of receipt when `ts` was not an integer
   * within the window the collector takes (`events/ts-window.ts`), and for a shed request.
   */
  readonly minute: number;
  /** `error | lifecycle | metric | log`, `unknown` for an unreadable one, `''` for a shed request (never read). */
  readonly type: string;
  readonly outcome: OutcomeName;
  /** Why, for losses (`''` when the outcome has no reason). */
  readonly reason: string;
  readonly origin: OutcomeOrigin;
  readonly count: number;
}

/** Rows of one (app, minute of `ts`, type) a write stored (`WriteResult.storedBy`). */
export interface StoredGroup {
  readonly app: string;
  /** Start of the UTC minute (epoch ms). */
  readonly minute: number;
  readonly type: string;
  readonly count: number;
}

/** A client report as stored: counted once per `id`, however often it was sent. */
export interface ClientReport {
  readonly id: string;
  readonly counts: readonly OutcomeCount[];
}

/** What `Storage.writeOutcomes` writes in one transaction. */
export interface OutcomeBatch {
  readonly counts: readonly OutcomeCount[];
  /** Each report's counts are written only when its id was not stored before. */
  readonly reports: readonly ClientReport[];
  /** Time of the write (epoch ms): a report id is kept (for dedupe) until its minute is purged. */
  readonly now: number;
}

/** `GET /v1/outcomes`: one app, `from` inclusive, `to` exclusive (epoch ms, whole minutes). */
export interface OutcomeQuery {
  readonly app: string;
  readonly from: number;
  readonly to: number;
  /**
   * False: the counts summed over event types too, each row's `type` empty. The loss map counts no
   * type (loss-map.ts), so its read asks for this: a third or less of the rows. Default true.
   */
  readonly byType?: boolean;
}

/** A sum of counts of one (minute, type, outcome, reason, origin) of the queried app. */
export type OutcomeRow = Omit<OutcomeCount, 'app'>;

export const MINUTE_MS = 60_000;

/** Start of the UTC minute holding `ts`. */
export function minuteOf(ts: number): number {
  return ts - (((ts % MINUTE_MS) + MINUTE_MS) % MINUTE_MS);
}
