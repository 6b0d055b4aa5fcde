import type { Principal } from '../auth/api-keys';
import type { EventType } from '../events/types';
import { rejectionHints, type RejectionReason } from '../events/rejection';
import type { EventLimits } from '../events/limits';
import type { OutcomeSubject } from '../loss-map/event-outcomes';
import { NO_APP, type OutcomeOrigin } from '../loss-map/outcome';
import type { EventRateLimiter } from '../ratelimit/event-rate-limiter';
import type { StorageRow } from '../storage/port';
import type { AppBound } from './app-bound';
import type { EventSink, LaneName } from './event-sink';
import {
  refusedUnread,
  type Candidate,
  type IntakeDecision,
  type LaneOffer,
  type RejectedEvent,
} from './intake-decision';
import type { IntakeAnswer, RejectedEntry, ThrottleReason } from './intake-answer';
import { InvalidEvent, type RequestEvents } from './request-events';
import type { IngestOptions } from './ingest-options';
import { applyRateLimits, type AppGroup } from './rate-limit-step';
import { adviceFor, subjectOf, tellDemand } from './advice-step';
import { UNAVAILABLE_RETRY_AFTER_S } from './retry-after';
import type { SamplingAdvisor } from './sampling-advice';

/** What the decider asks and tells: the sink, the rate limiter, the advice and the bound on apps. */
export interface IntakeDeciderOptions<Row = StorageRow> {
  readonly limits: EventLimits;
  readonly sink: EventSink<Row>;
  /** Per-app (or per-key) limit on non-error events; null: no limit. */
  readonly rateLimiter: EventRateLimiter | null;
  /** The sample rate advised to each app in the answer (sampling-advice.ts); none when absent. */
  readonly advisor?: SamplingAdvisor;
  /** The bound on distinct apps per minute (`app-bound.ts`); none when absent. */
  readonly apps?: Pick<AppBound, 'admits'>;
  /**
   * Whether a loss map counts refusals: only then is the app each refusal is counted under worked
   * out, which asks the bound on apps about the refused event's app. Default false.
   */
  readonly keysRefusals?: boolean;
}

/** One request's events sorted by the loop, on their way to `admit`. */
interface SortedRequest<Row> {
  readonly principal: Principal | null;
  readonly now: number;
  readonly origin: OutcomeOrigin;
  readonly captured: ReadonlyMap<string, number> | undefined;
  readonly answerRejected: RejectedEntry[];
  readonly rejected: RejectedEvent[];
  /** Reasons whose hint this request's answer already carries. */
  readonly hinted: Set<RejectionReason>;
  /** Error events: the fast lane. */
  readonly errors: Candidate<Row>[];
  /** Other events by app: the rate limit, then the standard lane. */
  readonly byApp: Map<string, Candidate<Row>[]>;
  readonly received: Record<EventType, number>;
  /** Set when the standard lane has no room for the request's non-error events (`standardFullFor`). */
  readonly standardFull: { readonly retryAfterSeconds: number } | null;
  /** Indices of the non-error events throttled unread because of it. */
  readonly unreadIndices: number[];
  readonly unread: OutcomeSubject[];
}

/** Why and how long what is not admitted waits, gathered over the steps of one request. */
interface Throttle {
  readonly indices: number[];
  reason: ThrottleReason | null;
  retryAfter: number;
  /** Set when the sink could not admit events at all (storage or queue unreachable). */
  unavailable: boolean;
  /** Set when a lane refused events (or they were throttled unread): not every refusal is an app's limit. */
  laneRefused: boolean;
}

/**
 * The one intake loop of every front (`POST /v1/events`, OTLP, Sentry), in order: validate each
 * event (partial success); errors go straight to the error lane (the fast lane: no rate limiter,
 * no Redis round trip); other events pass the rate limiter per app (or API key) and then the
 * standard lane. Each step is all-or-nothing per group and never waits for room. What is not
 * admitted is throttled with a `Retry-After`. It returns a plain decision and counts nothing: the
 * recorders read the decision (intake/recorders/).
 */
export class IntakeDecider<Row = StorageRow> {
  private readonly hints: Readonly<Record<RejectionReason, string>>;
  private readonly sink: EventSink<Row>;
  private readonly rateLimiter: EventRateLimiter | null;
  private readonly advisor: SamplingAdvisor | undefined;
  private readonly apps: Pick<AppBound, 'admits'> | undefined;
  private readonly keysRefusals: boolean;

  constructor(o: IntakeDeciderOptions<Row>) {
    this.hints = rejectionHints(o.limits);
    this.sink = o.sink;
    this.rateLimiter = o.rateLimiter;
    this.advisor = o.advisor;
    this.apps = o.apps;
    this.keysRefusals = o.keysRefusals === true;
  }

  /** The decision on one request's events (their count already checked against the request bound). */
  async decide(
    events: RequestEvents<Row>,
    principal: Principal | null,
    now: number,
    options: IngestOptions,
  ): Promise<IntakeDecision> {
    const origin = options.origin ?? 'direct';
    if (!this.sink.admitting()) {
      const answer = { kind: 'unavailable', retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_S } as const;
      return refusedUnread(answer, now, origin, 'storage_unavailable');
    }
    const request: SortedRequest<Row> = {
      principal,
      now,
      origin,
      captured: options.captured,
      answerRejected: [],
      rejected: [],
      hinted: new Set(),
      errors: [],
      byApp: new Map(),
      received: { error: 0, lifecycle: 0, metric: 0, log: 0 },
      standardFull: this.standardFullFor(events),
      unreadIndices: [],
      unread: [],
    };
    for (let index = 0; index < events.count; index++) {
      // When the standard lane has no room for this request's non-error events, they are throttled
      // unvalidated (all-or-nothing would refuse them after validation anyway), so a flood costs a
      // parse per request, not a validation per event.
      if (request.standardFull !== null && events.typeAt(index) !== 'error') {
        request.unreadIndices.push(index);
        continue;
      }
      const read = events.read(index, now);
      if (read instanceof InvalidEvent) {
        this.reject(request, index, read.reason, read.field);
        request.rejected.push({
          reason: read.reason,
          label: read.label,
          subject: this.refusedSubject(request, read.subject),
          origin,
        });
      } else this.sort(request, read);
    }
    for (const i of request.unreadIndices)
      request.unread.push(this.refusedSubject(request, events.subjectAt(i, now)));
    return this.admit(request, options.whole === true);
  }

  /** Sorts one valid event: refused when it names another app than its key's; else errors to the fast lane, the rest by app. */
  private sort(request: SortedRequest<Row>, c: Candidate<Row>): void {
    const { principal } = request;
    if (principal?.kind === 'ingest' && c.app !== principal.app) {
      this.reject(request, c.index, 'app_mismatch', 'source.app');
      // In the map of the key's app, never of the app claimed (a key holder cannot write into
      // another app's map), and `direct`: a report's rows of another app than the key's are left
      // out (client-report.ts), so this count is the only one of these events.
      request.rejected.push({
        reason: 'app_mismatch',
        label: c.type,
        subject: { app: principal.app, ts: c.ts, type: c.type },
        origin: 'direct',
      });
      return;
    }
    if (this.apps !== undefined && !this.apps.admits(c.app, request.now)) {
      this.reject(request, c.index, 'too_many_apps', 'source.app');
      // Under no app: a count per refused name would be what the bound is there to prevent.
      request.rejected.push({
        reason: 'too_many_apps',
        label: c.type,
        subject: { app: NO_APP, ts: c.ts, type: c.type },
        origin: request.origin,
      });
      return;
    }
    request.received[c.type]++;
    if (c.type === 'error') request.errors.push(c);
    else {
      const group = request.byApp.get(c.app);
      if (group === undefined) request.byApp.set(c.app, [c]);
      else group.push(c);
    }
  }

  /** The intake of a sorted request: the error fast lane, the rate limit, the standard lane. */
  private async admit(request: SortedRequest<Row>, whole: boolean): Promise<IntakeDecision> {
    const { errors, standardFull, unreadIndices, now, origin } = request;
    tellDemand(this.advisor, request);
    const throttle: Throttle = {
      indices: [],
      reason: null,
      retryAfter: 0,
      unavailable: false,
      laneRefused: false,
    };
    if (standardFull !== null && unreadIndices.length > 0) {
      this.advisor?.overloaded(now);
      for (const i of unreadIndices) throttle.indices.push(i);
      throttle.reason = 'queue_full';
      throttle.laneRefused = true;
      throttle.retryAfter = standardFull.retryAfterSeconds;
    }
    const decided = {
      now,
      origin,
      received: request.received,
      rejected: request.rejected,
      unread: request.unread,
    };
    // Errors go first and never wait on the rate limiter (the fast lane). A whole request waits for
    // its verdict: when no app of it is within its limit, none of it is admitted; else each app's
    // events are admitted or refused whole, and the refused apps are the answer's `throttled`.
    let errorsOffer = errors.length > 0 && !whole ? this.offer(request, 'error', errors, throttle) : null;
    const groups: AppGroup<Row>[] = [];
    for (const [app, candidates] of request.byApp)
      groups.push({ subject: subjectOf(request, app), candidates });
    const { passed, verdicts, overLimit, limited, retryAfterSeconds } = await applyRateLimits(
      this.rateLimiter,
      groups,
      whole ? 'whole' : 'partial',
    );
    for (const subject of limited) this.advisor?.limited(subject, now);
    if (overLimit.length > 0) {
      for (const c of overLimit) throttle.indices.push(c.index);
      throttle.reason = 'rate_limited';
      throttle.retryAfter = Math.max(throttle.retryAfter, retryAfterSeconds);
    }
    if (whole && throttle.reason === 'rate_limited' && passed.length === 0) {
      const all: number[] = [];
      for (const c of errors) all.push(c.index);
      for (const group of request.byApp.values()) for (const c of group) all.push(c.index);
      for (const i of throttle.indices) all.push(i);
      return {
        ...decided,
        answer: {
          kind: 'throttled',
          accepted: 0,
          rejected: request.answerRejected,
          throttled: [...new Set(all)].sort((a, b) => a - b),
          reason: 'rate_limited',
          limitedOnly: false,
          retryAfterSeconds: throttle.retryAfter,
          advice: adviceFor(this.advisor, request),
        },
        requestRefused: null,
        limits: verdicts,
        overLimit: errors.length === 0 ? overLimit : [...overLimit, ...errors],
        overLimitOutcome: 'throttled',
        offers: [],
        durableInTime: true,
      };
    }
    if (errors.length > 0 && whole) errorsOffer = this.offer(request, 'error', errors, throttle);
    const offers: LaneOffer[] = [];
    if (errorsOffer !== null) offers.push(await errorsOffer);
    const standard: Candidate<Row>[] = [];
    for (const g of passed) for (const c of g.candidates) standard.push(c);
    if (standard.length > 0) {
      const offer = await this.offer(request, 'standard', standard, throttle);
      if (offer.refused !== null)
        for (const g of passed) this.rateLimiter?.refund(g.subject, g.candidates.length);
      offers.push(offer);
    }
    let accepted = 0;
    const committed: Array<Promise<boolean>> = [];
    for (const offer of offers) {
      if (offer.refused === null) accepted += offer.candidates.length;
      if (offer.durable !== null) committed.push(offer.durable.committed);
    }
    // Events admitted on a durable acknowledgement count as accepted once it came in time. Else the
    // request is answered 503 and its events, still in the lanes, count as accepted once storage
    // has settled them (intake/recorders/).
    const durableInTime = committed.length === 0 || (await Promise.all(committed)).every(Boolean);
    const rest = {
      ...decided,
      limits: verdicts,
      overLimit,
      overLimitOutcome: whole ? ('rejected' as const) : ('throttled' as const),
      offers,
      durableInTime,
    };
    if (!durableInTime || (throttle.unavailable && accepted === 0)) {
      const retryAfterSeconds = Math.max(throttle.retryAfter, UNAVAILABLE_RETRY_AFTER_S);
      return {
        ...rest,
        answer: { kind: 'unavailable', retryAfterSeconds },
        requestRefused: 'storage_unavailable',
      };
    }
    return { ...rest, answer: this.answerOf(request, throttle, accepted), requestRefused: null };
  }

  /** The answer of a request some of whose events were admitted (or none refused for storage). */
  private answerOf(request: SortedRequest<Row>, throttle: Throttle, accepted: number): IntakeAnswer {
    const rejected = request.answerRejected;
    if (throttle.reason === null)
      return { kind: 'admitted', accepted, rejected, advice: adviceFor(this.advisor, request) };
    throttle.indices.sort((a, b) => a - b);
    return {
      kind: 'throttled',
      accepted,
      rejected,
      throttled: throttle.indices,
      reason: throttle.reason,
      limitedOnly: throttle.reason === 'rate_limited' && !throttle.laneRefused && !throttle.unavailable,
      retryAfterSeconds: throttle.retryAfter,
      advice: adviceFor(this.advisor, request),
    };
  }

  /**
   * The throttle for this request's non-error events when the standard lane has no room for all
   * of them, else null. They are counted only when the whole request might not fit.
   */
  private standardFullFor(events: RequestEvents<Row>): { readonly retryAfterSeconds: number } | null {
    const { sink } = this;
    if (sink.cannotAdmit === undefined || sink.cannotAdmit('standard', events.count) === null) return null;
    let standardCount = 0;
    for (let i = 0; i < events.count; i++) if (events.typeAt(i) !== 'error') standardCount++;
    return standardCount > 0 ? sink.cannotAdmit('standard', standardCount) : null;
  }

  /**
   * The loss-map key of a refusal no admission step vouched for (rejected, or throttled unread)
   * (docs/ARCHITECTURE.md, "The loss map"): the app of the request's ingest key (auth fixes the
   * app, so a key never writes counts of another app); else its own app when it passed the
   * app-name rule (`rawSubject`) and the bound on distinct apps admits it, else `NO_APP`: no name a
   * client invents becomes a key of the loss map the bound would have refused. Without a loss map,
   * `s` as it is (nothing reads it).
   */
  private refusedSubject(request: SortedRequest<Row>, s: OutcomeSubject): OutcomeSubject {
    if (!this.keysRefusals) return s;
    const { principal } = request;
    let app = s.app;
    if (principal?.kind === 'ingest') app = principal.app;
    else if (app !== NO_APP && this.apps !== undefined && !this.apps.admits(app, request.now)) app = NO_APP;
    return app === s.app ? s : { app, ts: s.ts, type: s.type };
  }

  /** Adds a refusal to the answer, with its reason's hint on the first of each reason. */
  private reject(
    request: SortedRequest<Row>,
    index: number,
    reason: RejectionReason,
    field: string | undefined,
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
    request.answerRejected.push(entry);
  }

  /** Offers all of `candidates` to the sink: admitted all, or none. */
  private async offer(
    request: SortedRequest<Row>,
    lane: LaneName,
    candidates: Candidate<Row>[],
    throttle: Throttle,
  ): Promise<LaneOffer> {
    const answer = await this.sink.offer(lane, candidates, request.now, request.origin);
    if (answer.admitted) {
      const durable =
        answer.durable === undefined ? null : { committed: answer.durable, settled: answer.settled };
      return { lane, candidates, refused: null, durable };
    }
    const reason = answer.reason === 'queue_full' ? 'queue_full' : 'unavailable';
    if (reason === 'queue_full' && lane === 'standard') this.advisor?.overloaded(request.now);
    for (const c of candidates) throttle.indices.push(c.index);
    if (answer.reason === 'unavailable') throttle.unavailable = true;
    throttle.laneRefused = true;
    throttle.reason ??= 'queue_full';
    throttle.retryAfter = Math.max(throttle.retryAfter, answer.retryAfterSeconds);
    return { lane, candidates, refused: reason, durable: null };
  }
}
