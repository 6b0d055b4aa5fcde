import type { EventLimits } from '../events/limits';
import type { RejectionReason } from '../events/rejection';
import { eventBytes } from '../events/event-size';
import { EVENT_TYPES, type TelemetryEvent } from '../events/types';
import { validateEvent } from '../events/validate';
import { rawSubject, type OutcomeSubject } from '../loss-map/event-outcomes';
import type { StorageRow } from '../storage/port';
import type { Candidate, TypeLabel } from './intake-decision';

/** An event that failed validation, with what the answer and the counts say of it. */
export class InvalidEvent {
  constructor(
    readonly reason: RejectionReason,
    readonly field: string | undefined,
    readonly label: TypeLabel,
    /** Its loss-map key as it came off the wire (`rawSubject`), before the app it is counted under. */
    readonly subject: OutcomeSubject,
  ) {}
}

/**
 * One request's events as the intake loop reads them, whichever front brought them: raw values
 * to validate (`POST /v1/events`), the single pass's rows (events/scan/), or events a front built
 * typed and valid (OTLP, Sentry).
 */
export interface RequestEvents<Row = StorageRow> {
  readonly count: number;
  /** The type of event `index`, read without validating it. */
  typeAt(index: number): TypeLabel;
  /** Event `index` validated: a candidate, or why it is refused. */
  read(index: number, now: number): Candidate<Row> | InvalidEvent;
  /** The loss-map key of event `index` when it is throttled unread (not validated). */
  subjectAt(index: number, now: number): OutcomeSubject;
}

const KNOWN_TYPES = new Set<string>(EVENT_TYPES);

/** The metrics label of a raw (possibly invalid) event: a bounded set. */
export function typeOf(raw: unknown): TypeLabel {
  const t = (raw as { type?: unknown } | null)?.type;
  return typeof t === 'string' && KNOWN_TYPES.has(t) ? (t as TelemetryEvent['type']) : 'unknown';
}

/** A typed event as a candidate. One literal of one shape: this runs once per event. */
function typedCandidate(event: TelemetryEvent, bytes: number, index: number): Candidate<never> {
  return { type: event.type, app: event.app, id: event.id, ts: event.ts, bytes, event, row: null, index };
}

/** A raw value validated (events/validate.ts). */
function validated(
  raw: unknown,
  index: number,
  now: number,
  limits: EventLimits,
): Candidate<never> | InvalidEvent {
  const v = validateEvent(raw, limits, now);
  if (v.ok) return typedCandidate(v.event, v.bytes, index);
  return new InvalidEvent(v.rejection.reason, v.rejection.field, typeOf(raw), rawSubject(raw, now, limits));
}

/** Events as they came off the wire, each validated in turn. */
export function rawEvents(raw: readonly unknown[], limits: EventLimits): RequestEvents<never> {
  return {
    count: raw.length,
    typeAt: (i) => typeOf(raw[i]),
    read: (i, now) => validated(raw[i], i, now, limits),
    subjectAt: (i, now) => rawSubject(raw[i], now, limits),
  };
}

/** Events a front built typed and valid with the rules and limits of events/: not validated again. */
export function typedEvents(events: readonly TelemetryEvent[]): RequestEvents<never> {
  return {
    count: events.length,
    typeAt: (i) => (events[i] as TelemetryEvent).type,
    read: (i) => {
      const event = events[i] as TelemetryEvent;
      return typedCandidate(event, eventBytes(event), i);
    },
    subjectAt: (i) => events[i] as TelemetryEvent,
  };
}

/** An event the single pass left to the typed path, as `JSON.parse` gave it. */
export class SlowEvent {
  constructor(readonly raw: unknown) {}
}

/** The single pass's events: rows it wrote itself, and the events it left to be validated. */
export function scannedEvents<Row>(
  entries: ReadonlyArray<Candidate<Row> | SlowEvent>,
  limits: EventLimits,
): RequestEvents<Row> {
  return {
    count: entries.length,
    typeAt: (i) => {
      const e = entries[i] as Candidate<Row> | SlowEvent;
      return e instanceof SlowEvent ? typeOf(e.raw) : e.type;
    },
    read: (i, now) => {
      const e = entries[i] as Candidate<Row> | SlowEvent;
      return e instanceof SlowEvent ? validated(e.raw, i, now, limits) : e;
    },
    subjectAt: (i, now) => {
      const e = entries[i] as Candidate<Row> | SlowEvent;
      return e instanceof SlowEvent ? rawSubject(e.raw, now, limits) : e;
    },
  };
}
