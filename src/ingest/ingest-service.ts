import type { Clock } from '../clock';
import { SluiceError } from '../errors/catalogue';
import type { EventLimits } from '../events/limits';
import type { TelemetryEvent } from '../events/types';
import { validateEvent } from '../events/validate';
import type { Metrics } from '../metrics/instruments';
import type { BatchWriterLoop } from '../pipeline/batch-writer-loop';
import { CommitTicket } from '../pipeline/commit-ticket';
import { retryAfterSeconds } from '../pipeline/drain-rate';
import type { BoundedLane, LaneItem } from '../pipeline/lane';
import type { IngestOutcome, RejectedEntry } from './ingest-result';

export interface IngestServiceOptions {
  readonly limits: EventLimits;
  /** Most events in one request; more is a 413 for the whole request. */
  readonly maxEventsPerRequest: number;
  /** `queued`: 202 once in a lane. `stored`: 202 once committed (group commit). */
  readonly ack: 'queued' | 'stored';
  /** With `ack: 'stored'`, longest wait for the commit (milliseconds) before answering 503. */
  readonly ackTimeoutMs: number;
  readonly errorLane: BoundedLane;
  readonly standardLane: BoundedLane;
  readonly writer: Pick<BatchWriterLoop, 'notify' | 'drainRate'>;
  /** Whether the background check last reached storage. */
  readonly storageUp: () => boolean;
  readonly clock: Clock;
  readonly metrics: Metrics;
}

interface Candidate {
  readonly index: number;
  readonly item: LaneItem;
}

/**
 * Admission of one request's events: validate each (partial success), then
 * admit errors to the error lane and the rest to the standard lane, each
 * all-or-nothing and without waiting. What a lane cannot take is throttled
 * with a `Retry-After` derived from the writer's drain rate.
 */
export class IngestService {
  constructor(private readonly o: IngestServiceOptions) {}

  async ingest(rawEvents: readonly unknown[]): Promise<IngestOutcome> {
    const { o } = this;
    if (rawEvents.length > o.maxEventsPerRequest) {
      throw new SluiceError(
        'too_many_events',
        `Request carries ${rawEvents.length} events; at most ${o.maxEventsPerRequest} are allowed.`,
      );
    }
    if (o.ack === 'stored' && !o.storageUp()) {
      o.metrics.requestsRejected.inc({ code: 'storage_unavailable' });
      return { kind: 'unavailable', retryAfterSeconds: 5 };
    }
    const now = o.clock.now();
    const ticket = o.ack === 'stored' ? new CommitTicket() : null;
    const rejected: RejectedEntry[] = [];
    const errors: Candidate[] = [];
    const standard: Candidate[] = [];
    let errorBytes = 0;
    let standardBytes = 0;
    for (let index = 0; index < rawEvents.length; index++) {
      const v = validateEvent(rawEvents[index], o.limits, now);
      if (!v.ok) {
        rejected.push({ index, ...v.rejection });
        o.metrics.eventsRejected.inc({ reason: v.rejection.reason });
        o.metrics.eventsReceived.inc({ type: typeOf(rawEvents[index]) });
        continue;
      }
      o.metrics.eventsReceived.inc({ type: v.event.type });
      const item: LaneItem = { event: v.event, bytes: v.bytes, ticket, admittedAt: now };
      if (v.event.type === 'error') {
        errors.push({ index, item });
        errorBytes += v.bytes;
      } else {
        standard.push({ index, item });
        standardBytes += v.bytes;
      }
    }

    const throttled: number[] = [];
    let retryAfter = 0;
    let accepted = 0;
    for (const [lane, candidates, bytes] of [
      [o.errorLane, errors, errorBytes],
      [o.standardLane, standard, standardBytes],
    ] as const) {
      if (candidates.length === 0) continue;
      const items = candidates.map((c) => c.item);
      if (lane.tryAdmit(items, bytes)) {
        accepted += items.length;
        for (const c of candidates)
          o.metrics.eventsAccepted.inc({ type: c.item.event.type, lane: lane.name });
        continue;
      }
      for (const c of candidates) {
        throttled.push(c.index);
        o.metrics.eventsThrottled.inc({ reason: 'queue_full', type: c.item.event.type });
      }
      const wait = retryAfterSeconds(
        lane.heldEvents,
        items.length,
        lane.limits.maxEvents,
        o.writer.drainRate.perSecond(),
      );
      retryAfter = Math.max(retryAfter, wait);
    }
    if (accepted > 0) o.writer.notify();

    if (ticket && accepted > 0) {
      ticket.arm(accepted);
      if (!(await this.committedInTime(ticket))) {
        o.metrics.requestsRejected.inc({ code: 'storage_unavailable' });
        return { kind: 'unavailable', retryAfterSeconds: 5 };
      }
    }
    if (throttled.length > 0) {
      throttled.sort((a, b) => a - b);
      return {
        kind: 'throttled',
        accepted,
        rejected,
        throttled,
        reason: 'queue_full',
        retryAfterSeconds: retryAfter,
      };
    }
    return { kind: 'taken', accepted, rejected };
  }

  private committedInTime(ticket: CommitTicket): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), this.o.ackTimeoutMs);
      void ticket.committed.then(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}

const KNOWN_TYPES = new Set<string>(['error', 'lifecycle', 'metric', 'log']);

/** The metrics label of a raw (possibly invalid) event: a bounded set. */
function typeOf(raw: unknown): TelemetryEvent['type'] | 'unknown' {
  const t = (raw as { type?: unknown } | null)?.type;
  return typeof t === 'string' && KNOWN_TYPES.has(t) ? (t as TelemetryEvent['type']) : 'unknown';
}
