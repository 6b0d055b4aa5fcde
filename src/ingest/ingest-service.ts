import type { Principal } from '../auth/api-keys';
import type { Clock } from '../clock';
import { SluiceError } from '../errors/catalogue';
import type { EventLimits } from '../events/limits';
import type { TelemetryEvent } from '../events/types';
import { validateEvent } from '../events/validate';
import type { AdmissionMetrics } from '../metrics/admission-instruments';
import type { Metrics } from '../metrics/instruments';
import type { BatchWriterLoop } from '../pipeline/batch-writer-loop';
import { CommitTicket } from '../pipeline/commit-ticket';
import { retryAfterSeconds, RETRY_AFTER_MAX_S, RETRY_AFTER_MIN_S } from '../pipeline/drain-rate';
import type { BoundedLane, LaneItem } from '../pipeline/lane';
import type { EventRateLimiter, LimitSubject } from '../ratelimit/event-rate-limiter';
import type { IngestOutcome, RejectedEntry, ThrottleReason } from './ingest-result';

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
  /** Per-app (or per-key) limit on non-error events; null: no limit. */
  readonly rateLimiter: EventRateLimiter | null;
  /** Whether the background check last reached storage. */
  readonly storageUp: () => boolean;
  readonly clock: Clock;
  readonly metrics: Metrics;
  readonly admissionMetrics: AdmissionMetrics;
}

interface Candidate {
  readonly index: number;
  readonly item: LaneItem;
}

interface Throttle {
  readonly indices: number[];
  reason: ThrottleReason | null;
  retryAfter: number;
}

/**
 * Admission of one request's events, in order: validate each (partial
 * success); errors go straight to the error lane (the fast lane: no rate
 * limiter, no Redis round trip); other events pass the rate limiter per app
 * (or API key) and then the standard lane. Each step is all-or-nothing per
 * group and never waits for room. What is not taken is throttled with a
 * `Retry-After`.
 */
export class IngestService {
  constructor(private readonly o: IngestServiceOptions) {}

  async ingest(rawEvents: readonly unknown[], principal: Principal | null = null): Promise<IngestOutcome> {
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
    const byApp = new Map<string, Candidate[]>();
    for (let index = 0; index < rawEvents.length; index++) {
      const v = validateEvent(rawEvents[index], o.limits, now);
      if (!v.ok) {
        this.reject(rejected, index, v.rejection.reason, v.rejection.field, typeOf(rawEvents[index]));
        continue;
      }
      if (principal?.kind === 'ingest' && v.event.app !== principal.app) {
        this.reject(rejected, index, 'app_mismatch', 'source.app', v.event.type);
        continue;
      }
      o.metrics.eventsReceived.inc({ type: v.event.type });
      const c: Candidate = { index, item: { event: v.event, bytes: v.bytes, ticket, admittedAt: now } };
      if (v.event.type === 'error') errors.push(c);
      else (byApp.get(v.event.app) ?? byApp.set(v.event.app, []).get(v.event.app))?.push(c);
    }

    const throttle: Throttle = { indices: [], reason: null, retryAfter: 0 };
    let accepted = 0;
    if (errors.length > 0 && this.admit(o.errorLane, errors, throttle)) accepted += errors.length;

    const limited = await this.applyRateLimits(byApp, principal, throttle);
    const standard = limited.flatMap((g) => g.candidates);
    if (standard.length > 0) {
      if (this.admit(o.standardLane, standard, throttle)) accepted += standard.length;
      else for (const g of limited) o.rateLimiter?.refund(g.subject, g.candidates.length);
    }
    if (accepted > 0) o.writer.notify();

    if (ticket && accepted > 0) {
      ticket.arm(accepted);
      if (!(await this.committedInTime(ticket))) {
        o.metrics.requestsRejected.inc({ code: 'storage_unavailable' });
        return { kind: 'unavailable', retryAfterSeconds: 5 };
      }
    }
    if (throttle.reason !== null) {
      throttle.indices.sort((a, b) => a - b);
      return {
        kind: 'throttled',
        accepted,
        rejected,
        throttled: throttle.indices,
        reason: throttle.reason,
        retryAfterSeconds: throttle.retryAfter,
      };
    }
    return { kind: 'taken', accepted, rejected };
  }

  private reject(
    rejected: RejectedEntry[],
    index: number,
    reason: RejectedEntry['reason'],
    field: string | undefined,
    type: string,
  ): void {
    rejected.push(field === undefined ? { index, reason } : { index, reason, field });
    this.o.metrics.eventsRejected.inc({ reason });
    this.o.metrics.eventsReceived.inc({ type });
  }

  /** Consults the limiter once per app; returns the groups it let through. */
  private async applyRateLimits(
    byApp: Map<string, Candidate[]>,
    principal: Principal | null,
    throttle: Throttle,
  ): Promise<Array<{ subject: LimitSubject; candidates: Candidate[] }>> {
    const groups = [...byApp].map(([app, candidates]) => ({
      subject: { key: principal ? `key:${principal.keyId}` : `app:${app}`, app },
      candidates,
    }));
    const limiter = this.o.rateLimiter;
    if (limiter === null) return groups;
    const decisions = await Promise.all(groups.map((g) => limiter.consume(g.subject, g.candidates.length)));
    const passed: typeof groups = [];
    groups.forEach((g, i) => {
      const d = decisions[i];
      if (d === undefined) return;
      this.o.admissionMetrics.decisions.inc({ result: d.allowed ? 'allowed' : 'limited', store: d.store });
      if (d.allowed) {
        passed.push(g);
        return;
      }
      for (const c of g.candidates) {
        throttle.indices.push(c.index);
        this.o.metrics.eventsThrottled.inc({ reason: 'rate_limited', type: c.item.event.type });
      }
      throttle.reason = 'rate_limited';
      const seconds = Math.ceil(d.retryAfterMs / 1000);
      throttle.retryAfter = Math.max(
        throttle.retryAfter,
        Math.min(RETRY_AFTER_MAX_S, Math.max(RETRY_AFTER_MIN_S, seconds)),
      );
    });
    return passed;
  }

  /** All of `candidates` into `lane`, or none (then they are throttled as queue_full). */
  private admit(lane: BoundedLane, candidates: Candidate[], throttle: Throttle): boolean {
    let bytes = 0;
    for (const c of candidates) bytes += c.item.bytes;
    if (
      lane.tryAdmit(
        candidates.map((c) => c.item),
        bytes,
      )
    ) {
      for (const c of candidates)
        this.o.metrics.eventsAccepted.inc({ type: c.item.event.type, lane: lane.name });
      return true;
    }
    for (const c of candidates) {
      throttle.indices.push(c.index);
      this.o.metrics.eventsThrottled.inc({ reason: 'queue_full', type: c.item.event.type });
    }
    throttle.reason ??= 'queue_full';
    const wait = retryAfterSeconds(
      lane.heldEvents,
      candidates.length,
      lane.limits.maxEvents,
      this.o.writer.drainRate.perSecond(),
    );
    throttle.retryAfter = Math.max(throttle.retryAfter, wait);
    return false;
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
