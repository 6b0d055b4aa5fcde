import type { Principal } from '../auth/api-keys';
import type { Clock } from '../clock';
import { SluiceError } from '../errors/catalogue';
import type { EventLimits } from '../events/limits';
import { EVENT_TYPES, type EventType, type TelemetryEvent } from '../events/types';
import { eventBytes } from '../events/event-size';
import { validateEvent } from '../events/validate';
import { RequestScan, type ScanHandlers } from '../events/scan/scan-request';
import type { ScannedEvent } from '../events/scan/scanned-event';
import type { StorageRow } from '../storage/port';
import { rejectionHints, type RejectionReason } from '../events/rejection';
import type { IntakeMetrics } from '../metrics/intake-instruments';
import type { Metrics } from '../metrics/instruments';
import { UNAVAILABLE_RETRY_AFTER_S, retryAfterFromMs } from './retry-after';
import type { EventRateLimiter, LimitSubject } from '../ratelimit/event-rate-limiter';
import type { AppActivity } from '../metrics/app-activity';
import type { AppBound } from './app-bound';
import { typedItem, type EventSink, type LaneName, type SinkItem } from './event-sink';
import type { AppAdvice, IntakeAnswer, RejectedEntry, ThrottleReason } from './intake-answer';
import type { SamplingAdvisor } from './sampling-advice';
import { countEvents, rawSubject, type CountSink, type OutcomeSubject } from '../loss-map/event-outcomes';
import { NO_APP, type OutcomeOrigin } from '../loss-map/outcome';

export interface IntakeServiceOptions {
  readonly limits: EventLimits;
  /** Most events in one request; more is a 413 for the whole request. */
  readonly maxEventsPerRequest: number;
  /** Where admitted events go: the lanes, or a JetStream stream in queue mode. */
  readonly sink: EventSink;
  /** Per-app (or per-key) limit on non-error events; null: no limit. */
  readonly rateLimiter: EventRateLimiter | null;
  readonly clock: Clock;
  readonly metrics: Metrics;
  readonly intakeMetrics: IntakeMetrics;
  /** Per-app tally of what was admitted and throttled (the pipeline view's busiest apps); none when absent. */
  readonly activity?: AppActivity;
  /** The loss map's counts of every decision (`OutcomeRecorder.count`); none when absent. */
  readonly outcomes?: CountSink;
  /** The sample rate advised to each app in the answer (sampling-advice.ts); none when absent. */
  readonly advisor?: SamplingAdvisor;
  /** The bound on distinct apps per minute (`app-bound.ts`); none when absent. */
  readonly apps?: Pick<AppBound, 'admits'>;
  /**
   * Writes an event the single pass validated as its storage row (`Storage.rowFromScan`, or the
   * queue's message row). Absent: every request takes the typed path (`JSON.parse`, validate).
   */
  readonly rowFromScan?: (body: Uint8Array, event: ScannedEvent) => StorageRow;
}

/**
 * Events scanned between two turns of a large body (see `ingestBody`): about half a millisecond of
 * work on the bench box, within the turn budget, so a request of the usual 100 events is one turn.
 */
const SCAN_SLICE_EVENTS = 128;

/** An event the single pass left to the typed path, as `JSON.parse` gave it. */
class SlowEvent {
  constructor(readonly raw: unknown) {}
}

/** What a request's client report tells the intake (`POST /v1/events`' `report` member). */
export interface ReportReading {
  /** `sdk` when the request carried a valid client report (the loss map's origin); default `direct`. */
  readonly origin?: OutcomeOrigin;
  /**
   * Events the report says its sender captured since its previous report, per app, of the types a
   * limit applies to (not errors), before any sampling: the app's demand. Absent without a report:
   * the request's own events are the demand then.
   */
  readonly captured?: ReadonlyMap<string, number>;
}

/** Options of one `ingest` call. */
export interface IngestOptions extends ReportReading {
  /**
   * Take each app's events whole or refuse them whole at the rate limit, and refuse the request
   * whole when no app of it is within its limit (default false: partial, in request order).
   */
  readonly whole?: boolean;
}

/** An event that passed validation, as the sink takes it, with its index in the request. */
interface Candidate extends SinkItem {
  readonly index: number;
}

/** What the single pass made of one event. */
type ScannedEntry = Candidate | SlowEvent;

/** One request's events on their way through intake: `open`, then `sort` each, then `admit`. */
interface OpenRequest {
  readonly principal: Principal | null;
  readonly now: number;
  readonly rejected: RejectedEntry[];
  /** Reasons whose hint this request's answer already carries. */
  readonly hinted: Set<RejectionReason>;
  /** Error events: the fast lane. */
  readonly errors: Candidate[];
  /** Other events by app: the rate limit, then the standard lane. */
  readonly byApp: Map<string, Candidate[]>;
  /** Counted per type and added once per request: a labelled inc per event costs more than the validation. */
  readonly received: Record<EventType, number>;
  /** Set when the standard lane has no room for the request's non-error events (`standardFullFor`). */
  readonly standardFull: { readonly retryAfterSeconds: number } | null;
  /** Indices of the non-error events throttled unread because of it. */
  readonly shed: number[];
  readonly origin: OutcomeOrigin;
  readonly captured: ReadonlyMap<string, number> | undefined;
}

interface Throttle {
  readonly indices: number[];
  reason: ThrottleReason | null;
  retryAfter: number;
  /** Set when the sink could not take events at all (storage or queue unreachable). */
  unavailable: boolean;
  /** Set when a lane (or the shedding before it) refused events: not every refusal is an app's limit. */
  laneRefused: boolean;
  /** Events refused by their app's rate limit, counted in the loss map once the request's verdict is known. */
  readonly overLimit: Candidate[];
}

/**
 * Intake of one request's events, in order: validate each (partial
 * success); errors go straight to the error lane (the fast lane: no rate
 * limiter, no Redis round trip); other events pass the rate limiter per app
 * (or API key) and then the standard lane. Each step is all-or-nothing per
 * group and never waits for room. What is not admitted is throttled with a
 * `Retry-After`.
 */
export class IntakeService {
  private readonly hints: Readonly<Record<RejectionReason, string>>;

  constructor(private readonly o: IntakeServiceOptions) {
    this.hints = rejectionHints(o.limits);
  }

  /**
   * Admits what it can of one request's events, as they came off the wire: each is validated
   * (events/validate.ts). `whole`: for fronts that have no per-record retry list (OTLP): the rate
   * limit takes an app's events whole while its budget is positive (a debt later windows repay)
   * or refuses all of them; the request is refused whole only when every app of it is refused.
   */
  async ingest(
    rawEvents: readonly unknown[],
    principal: Principal | null = null,
    options: IngestOptions = {},
  ): Promise<IntakeAnswer> {
    const request = this.open(
      rawEvents.length,
      (i) => typeOf(rawEvents[i]),
      principal,
      this.o.clock.now(),
      options,
    );
    if ('kind' in request) return request;
    for (let index = 0; index < rawEvents.length; index++) {
      // When the standard lane has no room for this request's non-error events, they are throttled
      // unvalidated (all-or-nothing would refuse them after validation anyway), so a flood costs a
      // JSON parse per request, not a validation per event.
      if (request.standardFull !== null && typeOf(rawEvents[index]) !== 'error') {
        request.shed.push(index);
        continue;
      }
      const v = validateEvent(rawEvents[index], this.o.limits, request.now);
      if (!v.ok) {
        this.reject(request, index, v.rejection.reason, v.rejection.field, typeOf(rawEvents[index]));
        this.countOutcome(
          request,
          [rawSubject(rawEvents[index], request.now, this.o.limits)],
          'rejected',
          v.rejection.reason,
        );
        continue;
      }
      this.sort(request, { ...typedItem(v.event, v.bytes), index });
    }
    this.countOutcome(
      request,
      request.shed.map((i) => rawSubject(rawEvents[i], request.now, this.o.limits)),
      'throttled',
      'queue_full',
    );
    return this.admit(request, options);
  }

  /**
   * `ingest` of a `POST /v1/events` body read in one pass (events/scan/): each event the pass
   * takes goes from the body's bytes to its storage row with no `JSON.parse` and no typed event;
   * the others are validated as `ingest` does. The same answers as `ingest` of the parsed body.
   * Null when the body is not of the shape the pass reads (or no row writer is set): the caller
   * parses it and calls `ingest`. `nextSlice` is awaited between slices of a large body, so that
   * the loop polls its sockets in between. `checkShape` is the body's shape check, called before the
   * pass skips nested values or parses anything (`RequestScan.open`); it throws to refuse the body.
   */
  async ingestBody(
    body: Buffer,
    principal: Principal | null,
    nextSlice: () => Promise<void>,
    checkShape: () => void,
    readReport?: (raw: unknown) => ReportReading,
  ): Promise<IntakeAnswer | null> {
    const { rowFromScan } = this.o;
    if (rowFromScan === undefined) return null;
    const now = this.o.clock.now();
    const scan = RequestScan.open(body, this.o.limits, now, this.o.maxEventsPerRequest, checkShape);
    if (scan === null) return null;
    const entries: ScannedEntry[] = [];
    const handlers: ScanHandlers = {
      fast: (f, index) => {
        entries.push({
          type: f.type,
          app: scan.textOf(f.app, true),
          id: scan.idOf(f),
          ts: f.ts,
          bytes: f.bytes,
          event: null,
          row: rowFromScan(body, f),
          index,
        });
      },
      slow: (raw) => entries.push(new SlowEvent(raw)),
    };
    for (;;) {
      const step = scan.step(SCAN_SLICE_EVENTS, handlers);
      if (step === 'fallback') return null;
      if (step === 'done') break;
      await nextSlice();
    }
    const typeAt = (i: number): ReturnType<typeof typeOf> => {
      const e = entries[i];
      return e instanceof SlowEvent ? typeOf(e.raw) : (e as Candidate).type;
    };
    // The body's client report (the loss map), read by the scan after the events array.
    const report = scan.reportText();
    const reading = readReport?.(report === null ? undefined : parseOrNull(report)) ?? {};
    const request = this.open(entries.length, typeAt, principal, now, reading);
    if ('kind' in request) return request;
    for (let index = 0; index < entries.length; index++) {
      const entry = entries[index] as ScannedEntry;
      if (request.standardFull !== null && typeAt(index) !== 'error') {
        request.shed.push(index);
        continue;
      }
      if (!(entry instanceof SlowEvent)) {
        this.sort(request, entry);
        continue;
      }
      const v = validateEvent(entry.raw, this.o.limits, now);
      if (!v.ok) {
        this.reject(request, index, v.rejection.reason, v.rejection.field, typeOf(entry.raw));
        this.countOutcome(
          request,
          [rawSubject(entry.raw, now, this.o.limits)],
          'rejected',
          v.rejection.reason,
        );
        continue;
      }
      this.sort(request, { ...typedItem(v.event, v.bytes), index });
    }
    this.countOutcome(
      request,
      request.shed.map((i) => {
        const e = entries[i] as ScannedEntry;
        return e instanceof SlowEvent ? rawSubject(e.raw, now, this.o.limits) : e;
      }),
      'throttled',
      'queue_full',
    );
    return this.admit(request, reading);
  }

  /**
   * `ingest` for events a front built typed and valid itself, with the rules and limits of events/
   * (the OTLP front maps its records so): the same intake, without validating them again.
   */
  async ingestValidated(
    events: readonly TelemetryEvent[],
    principal: Principal | null = null,
    options: IngestOptions = {},
  ): Promise<IntakeAnswer> {
    const request = this.open(
      events.length,
      (i) => (events[i] as TelemetryEvent).type,
      principal,
      this.o.clock.now(),
      options,
    );
    if ('kind' in request) return request;
    events.forEach((event, index) => {
      if (request.standardFull !== null && event.type !== 'error') request.shed.push(index);
      else this.sort(request, { ...typedItem(event, eventBytes(event)), index });
    });
    this.countOutcome(
      request,
      request.shed.map((i) => events[i] as TelemetryEvent),
      'throttled',
      'queue_full',
    );
    return this.admit(request, options);
  }

  /** A request's intake begins: its size checked, the sink asked whether it takes events at all. */
  private open(
    count: number,
    typeAt: (index: number) => EventType | 'unknown',
    principal: Principal | null,
    now: number,
    options: IngestOptions = {},
  ): OpenRequest | IntakeAnswer {
    const { o } = this;
    if (count > o.maxEventsPerRequest) {
      o.metrics.requestsRejected.inc({ code: 'too_many_events' });
      throw new SluiceError(
        'too_many_events',
        `Request carries ${count} events; at most ${o.maxEventsPerRequest} are allowed.`,
      );
    }
    if (!o.sink.admitting()) {
      o.metrics.requestsRejected.inc({ code: 'storage_unavailable' });
      return { kind: 'unavailable', retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_S };
    }
    return {
      principal,
      now,
      rejected: [],
      hinted: new Set(),
      errors: [],
      byApp: new Map(),
      received: { error: 0, lifecycle: 0, metric: 0, log: 0 },
      standardFull: this.standardFullFor(count, typeAt),
      shed: [],
      origin: options.origin ?? 'direct',
      captured: options.captured,
    };
  }

  /** Sorts one valid event: refused when it names another app than its key's; else errors to the fast lane, the rest by app. */
  private sort(request: OpenRequest, c: Candidate): void {
    const { principal } = request;
    if (principal?.kind === 'ingest' && c.app !== principal.app) {
      this.reject(request, c.index, 'app_mismatch', 'source.app', c.type);
      // In the map of the key's app, never of the app claimed (a key holder cannot write into
      // another app's map), and `direct`: a report's rows of another app than the key's are left
      // out (client-report.ts), so this count is the only one of these events.
      this.countOutcome(
        request,
        [{ app: principal.app, ts: c.ts, type: c.type }],
        'rejected',
        'app_mismatch',
        'direct',
      );
      return;
    }
    if (this.o.apps !== undefined && !this.o.apps.admits(c.app, request.now)) {
      this.reject(request, c.index, 'too_many_apps', 'source.app', c.type);
      // Under no app: a count per refused name would be what the bound is there to prevent.
      this.countOutcome(request, [{ app: NO_APP, ts: c.ts, type: c.type }], 'rejected', 'too_many_apps');
      return;
    }
    request.received[c.type]++;
    if (c.type === 'error') request.errors.push(c);
    else (request.byApp.get(c.app) ?? request.byApp.set(c.app, []).get(c.app))?.push(c);
  }

  /** The intake of a sorted request: the error fast lane, the rate limit, the standard lane. */
  private async admit(request: OpenRequest, options: IngestOptions): Promise<IntakeAnswer> {
    const { o } = this;
    const { rejected, errors, byApp, received, standardFull, shed } = request;
    for (const type of EVENT_TYPES)
      if (received[type] > 0) o.metrics.eventsReceived.inc({ type }, received[type]);
    this.recordDemand(request);

    const throttle: Throttle = {
      indices: [],
      reason: null,
      retryAfter: 0,
      unavailable: false,
      laneRefused: false,
      overLimit: [],
    };
    if (standardFull !== null && shed.length > 0) {
      o.advisor?.overloaded(request.now);
      throttle.indices.push(...shed);
      throttle.reason = 'queue_full';
      throttle.laneRefused = true;
      throttle.retryAfter = standardFull.retryAfterSeconds;
      o.metrics.eventsThrottled.inc({ reason: 'queue_full', type: 'unvalidated' }, shed.length);
    }
    const durable: DurableOffer[] = [];
    const whole = options.whole === true;
    // Errors go first and never wait on the rate limiter (the fast lane). A whole request waits for
    // its verdict: when no app of it is within its limit, none of it is admitted; else each app's
    // events are admitted or refused whole, and the refused apps are the answer's `throttled`.
    let errorsAdmitted =
      errors.length > 0 && !whole
        ? this.offer(request, 'error', errors, throttle, durable)
        : Promise.resolve(0);
    const limited = await this.applyRateLimits(request, throttle, whole ? 'whole' : 'partial');
    if (whole && throttle.reason === 'rate_limited' && limited.length === 0) {
      for (const c of errors) o.activity?.record(c.app, 0, 1);
      const all = [...errors, ...[...byApp.values()].flat()].map((c) => c.index);
      for (const [type, n] of countByType(errors))
        o.metrics.eventsThrottled.inc({ reason: 'rate_limited', type }, n);
      this.countCandidates(request, [...errors, ...throttle.overLimit], 'throttled', 'rate_limited');
      return {
        kind: 'throttled',
        accepted: 0,
        rejected,
        throttled: [...new Set([...throttle.indices, ...all])].sort((a, b) => a - b),
        reason: 'rate_limited',
        limitedOnly: false,
        retryAfterSeconds: throttle.retryAfter,
        advice: this.adviceFor(request),
      };
    }
    // A whole request's apps over their limit are refused for good (its front has no retry list
    // for them); a partial request's are sent again by their sender.
    if (whole) this.countOutcome(request, throttle.overLimit, 'rejected', 'rate_limited');
    else this.countCandidates(request, throttle.overLimit, 'throttled', 'rate_limited');
    if (errors.length > 0 && whole) errorsAdmitted = this.offer(request, 'error', errors, throttle, durable);
    const standard = limited.flatMap((g) => g.candidates);
    const errorsAccepted = await errorsAdmitted;
    let accepted = errorsAccepted;
    if (o.activity !== undefined && errors.length > 0) {
      const admitted = errorsAccepted > 0 ? 1 : 0;
      for (const c of errors) o.activity.record(c.app, admitted, 1 - admitted, admitted);
    }
    if (standard.length > 0) {
      const admitted = await this.offer(request, 'standard', standard, throttle, durable);
      if (admitted === 0) for (const g of limited) o.rateLimiter?.refund(g.subject, g.candidates.length);
      if (o.activity !== undefined) {
        for (const g of limited) {
          const n = g.candidates.length;
          o.activity.record(g.subject.app, admitted === 0 ? 0 : n, admitted === 0 ? n : 0);
        }
      }
      accepted += admitted;
    }

    const durableInTime = (await Promise.all(durable.map((d) => d.committed))).every(Boolean);
    // Events admitted on a durable acknowledgement count as accepted once it came in time. Else the
    // request is answered 503 (throttled `unavailable` here) and its events, still in the lanes,
    // count as accepted once storage has settled them: every copy that reaches storage is
    // accepted once, and a resend of them that storage finds stored is a duplicate.
    for (const d of durable) {
      if (durableInTime) this.countCandidates(request, d.candidates, 'accepted', '');
      else {
        this.countCandidates(request, d.candidates, 'throttled', 'unavailable');
        void d.settled?.then(() => this.countCandidates(request, d.candidates, 'accepted', ''));
      }
    }
    if (!durableInTime || (throttle.unavailable && accepted === 0)) {
      o.metrics.requestsRejected.inc({ code: 'storage_unavailable' });
      return {
        kind: 'unavailable',
        retryAfterSeconds: Math.max(throttle.retryAfter, UNAVAILABLE_RETRY_AFTER_S),
      };
    }
    if (throttle.reason !== null) {
      throttle.indices.sort((a, b) => a - b);
      return {
        kind: 'throttled',
        accepted,
        rejected,
        throttled: throttle.indices,
        reason: throttle.reason,
        limitedOnly: throttle.reason === 'rate_limited' && !throttle.laneRefused && !throttle.unavailable,
        retryAfterSeconds: throttle.retryAfter,
        advice: this.adviceFor(request),
      };
    }
    return { kind: 'admitted', accepted, rejected, advice: this.adviceFor(request) };
  }

  /**
   * Tells the advisor what the request's senders generated: what its client report says they
   * captured (before sampling), else its own events a limit applies to.
   */
  private recordDemand(request: OpenRequest): void {
    const { advisor } = this.o;
    if (advisor === undefined) return;
    if (request.captured !== undefined) {
      for (const [app, n] of request.captured) advisor.demand(subjectOf(request, app), n, request.now);
    } else {
      for (const [app, candidates] of request.byApp)
        advisor.demand(subjectOf(request, app), candidates.length, request.now);
    }
  }

  /** The rate advised to each app of the request: to an SDK's request always, else only below 1. */
  private adviceFor(request: OpenRequest): readonly AppAdvice[] {
    const { advisor } = this.o;
    if (advisor === undefined) return NO_ADVICE;
    const apps = new Set(request.byApp.keys());
    for (const c of request.errors) apps.add(c.app);
    const advice: AppAdvice[] = [];
    for (const app of apps) {
      const sampleRate = advisor.advice(subjectOf(request, app), request.now);
      if (sampleRate < 1 || request.origin === 'sdk') {
        advice.push({ app, sampleRate });
        this.o.intakeMetrics.advice.observe(sampleRate);
      }
    }
    return advice;
  }

  /**
   * The throttle for this request's non-error events when the standard lane has no room for all
   * of them, else null. They are counted only when the whole request might not fit.
   */
  private standardFullFor(
    count: number,
    typeAt: (index: number) => EventType | 'unknown',
  ): { readonly retryAfterSeconds: number } | null {
    const { sink } = this.o;
    if (sink.cannotAdmit === undefined || sink.cannotAdmit('standard', count) === null) return null;
    let standardCount = 0;
    for (let i = 0; i < count; i++) if (typeAt(i) !== 'error') standardCount++;
    return standardCount > 0 ? sink.cannotAdmit('standard', standardCount) : null;
  }

  /**
   * Counts a refusal of events no admission step vouched for (rejected, or throttled unread) for
   * the loss map (docs/ARCHITECTURE.md, "The loss map"), each under `refusedApp`.
   */
  private countOutcome(
    request: OpenRequest,
    subjects: readonly OutcomeSubject[],
    outcome: 'rejected' | 'throttled',
    reason: string,
    origin: OutcomeOrigin = request.origin,
  ): void {
    const sink = this.o.outcomes;
    if (sink !== undefined && subjects.length > 0) {
      const subject = (s: OutcomeSubject): OutcomeSubject => {
        const app = this.refusedApp(request, s.app);
        return app === s.app ? s : { app, ts: s.ts, type: s.type };
      };
      countEvents(sink, subjects, subject, outcome, reason, origin);
    }
  }

  /**
   * The app a refused event is counted under: the app of the request's ingest key (auth fixes the
   * app, so a key never writes counts of another app); else its own app when it passed the
   * app-name rule (`rawSubject`) and the bound on distinct apps takes it, else `NO_APP`: no name a
   * client invents becomes a key of the loss map the bound would have refused.
   */
  private refusedApp(request: OpenRequest, app: string): string {
    const { principal } = request;
    if (principal?.kind === 'ingest') return principal.app;
    if (app === NO_APP || this.o.apps === undefined) return app;
    return this.o.apps.admits(app, request.now) ? app : NO_APP;
  }

  private countCandidates(
    request: OpenRequest,
    candidates: readonly Candidate[],
    outcome: 'accepted' | 'throttled',
    reason: string,
  ): void {
    const sink = this.o.outcomes;
    if (sink !== undefined && candidates.length > 0)
      countEvents(sink, candidates, candidateSubject, outcome, reason, request.origin);
  }

  private reject(
    request: OpenRequest,
    index: number,
    reason: RejectionReason,
    field: string | undefined,
    type: string,
  ): void {
    const entry: { index: number; reason: RejectionReason; field?: string; hint?: string } = {
      index,
      reason,
    };
    if (field !== undefined) entry.field = field;
    if (!request.hinted.has(reason)) {
      request.hinted.add(reason);
      entry.hint = this.hints[reason];
    }
    request.rejected.push(entry);
    this.o.metrics.eventsRejected.inc({ reason });
    this.o.metrics.eventsReceived.inc({ type });
  }

  /**
   * Asks the limiter about every app of the request in one call; returns, per app, the events it
   * granted (the first ones, in request order) and throttles the rest with the limiter's wait.
   */
  private async applyRateLimits(
    request: OpenRequest,
    throttle: Throttle,
    mode: 'partial' | 'whole',
  ): Promise<Array<{ subject: LimitSubject; candidates: Candidate[] }>> {
    const groups = [...request.byApp].map(([app, candidates]) => ({
      subject: subjectOf(request, app),
      candidates,
    }));
    const limiter = this.o.rateLimiter;
    if (limiter === null) return groups;
    // Every app of the request is asked about, in one call: its work grows with the request's
    // events, which SLUICE_MAX_EVENTS_PER_REQUEST bounds, so a relay's request of many apps makes
    // progress for each of them at its limit.
    const grants = await limiter.spend(
      groups.map((g) => ({ subject: g.subject, events: g.candidates.length, mode })),
    );
    const passed: typeof groups = [];
    groups.forEach((g, i) => {
      const grant = grants[i];
      const granted = grant === undefined ? 0 : Math.min(grant.granted, g.candidates.length);
      const result = granted === g.candidates.length ? 'allowed' : granted === 0 ? 'limited' : 'partial';
      this.o.intakeMetrics.decisions.inc({ result, store: grant?.store ?? 'memory' });
      if (granted > 0) passed.push({ subject: g.subject, candidates: g.candidates.slice(0, granted) });
      if (granted < g.candidates.length) {
        this.o.advisor?.limited(g.subject, request.now);
        this.throttleLimited(request, g.candidates.slice(granted), throttle, grant?.retryAfterMs ?? 0);
        this.o.activity?.record(g.subject.app, 0, g.candidates.length - granted);
      }
    });
    return passed;
  }

  private throttleLimited(
    request: OpenRequest,
    candidates: readonly Candidate[],
    throttle: Throttle,
    waitMs: number,
  ): void {
    for (const c of candidates) throttle.indices.push(c.index);
    throttle.overLimit.push(...candidates);
    for (const [type, n] of countByType(candidates)) {
      this.o.metrics.eventsThrottled.inc({ reason: 'rate_limited', type }, n);
    }
    throttle.reason = 'rate_limited';
    throttle.retryAfter = Math.max(throttle.retryAfter, retryAfterFromMs(waitMs));
  }

  /** Offers all of `candidates` to the sink; returns how many were admitted (all or none). */
  private async offer(
    request: OpenRequest,
    lane: LaneName,
    candidates: Candidate[],
    throttle: Throttle,
    durable: DurableOffer[],
  ): Promise<number> {
    const answer = await this.o.sink.offer(lane, candidates, request.now, request.origin);
    if (answer.admitted) {
      for (const [type, n] of countByType(candidates)) this.o.metrics.eventsAccepted.inc({ type, lane }, n);
      if (answer.durable === undefined) this.countCandidates(request, candidates, 'accepted', '');
      else durable.push({ committed: answer.durable, settled: answer.settled, candidates });
      return candidates.length;
    }
    const reason = answer.reason === 'queue_full' ? 'queue_full' : 'unavailable';
    if (reason === 'queue_full' && lane === 'standard') this.o.advisor?.overloaded(request.now);
    this.countCandidates(request, candidates, 'throttled', reason);
    for (const c of candidates) throttle.indices.push(c.index);
    for (const [type, n] of countByType(candidates)) this.o.metrics.eventsThrottled.inc({ reason, type }, n);
    if (answer.reason === 'unavailable') throttle.unavailable = true;
    throttle.laneRefused = true;
    throttle.reason ??= 'queue_full';
    throttle.retryAfter = Math.max(throttle.retryAfter, answer.retryAfterSeconds);
    return 0;
  }
}

const NO_ADVICE: readonly AppAdvice[] = [];

/** Who a limit counts for an app of this request: the app, or the API key it came with. */
function subjectOf(request: OpenRequest, app: string): LimitSubject {
  const { principal } = request;
  return { key: principal ? `key:${principal.keyId}` : `app:${app}`, app };
}

/** A JSON value the scan delimited, or null when it does not parse (a report then is not valid). */
function parseOrNull(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** Events a lane took on a durable acknowledgement, and whether it came in time. */
interface DurableOffer {
  readonly committed: Promise<boolean>;
  /** Once storage has settled them, however late (`SinkAnswer.settled`). */
  readonly settled: Promise<void> | undefined;
  readonly candidates: readonly Candidate[];
}

/** The loss map's subject of a candidate: its app, `ts` and type. */
function candidateSubject(c: Candidate): Candidate {
  return c;
}

function countByType(candidates: readonly Candidate[]): Map<EventType, number> {
  const counts = new Map<EventType, number>();
  for (const c of candidates) counts.set(c.type, (counts.get(c.type) ?? 0) + 1);
  return counts;
}

const KNOWN_TYPES = new Set<string>(EVENT_TYPES);

/** The metrics label of a raw (possibly invalid) event: a bounded set. */
function typeOf(raw: unknown): TelemetryEvent['type'] | 'unknown' {
  const t = (raw as { type?: unknown } | null)?.type;
  return typeof t === 'string' && KNOWN_TYPES.has(t) ? (t as TelemetryEvent['type']) : 'unknown';
}
