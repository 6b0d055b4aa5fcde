import { PriorityBuffer, type BufferEntry } from './buffer';
import type { ClientReports, WireReport } from './client-report';
import type { TimerHandle } from './clock';
import type { Diagnostics } from './diagnostics';
import { canGzip, encodeBatch, gzip, GZIP_MIN_BYTES, utf8Length } from './encode';
import type { ResolvedOptions } from './options';
import { pageOrigin } from './page-origin';
import { requestProblem } from './problems';
import { classify, retryDelay, type Outcome } from './retry';
import { Pace } from './pace';
import type { DynamicSampler } from './sampler';
import type { DropReason } from './stats';
import { KEEPALIVE_MAX_BYTES, type TransportRequest, type TransportResponse } from './transport';
import type { WireEvent } from './types';

/** Whether the SDK runs in a web page (cross-origin requests there go through CORS). */
const IN_PAGE = typeof document !== 'undefined';

/** Counters the delivery side feeds into `stats()`. */
export interface DeliveryCounters {
  sent: number;
  succeeded: number;
  throttled: number;
  failed: number;
}

/** What the delivery side tells the client about. */
export interface DeliveryHooks {
  /** Events lost, by reason (`stats().dropped`). */
  readonly onDrop: (reason: DropReason, count: number) => void;
  /** Problems for the host (`onError`, the console) and the `debug` trace of each request. */
  readonly diagnostics: Diagnostics;
  /** An unexpected throw caught inside the SDK (`stats().internalErrors`). */
  readonly onInternalError: (err: unknown) => void;
  /** The loss map's client reports: what became of each event, and the report each request carries. */
  readonly reports: ClientReports;
}

/** Someone waiting in `flush()` or `close()`. */
interface Waiter {
  /** Resolved once no entry with `seq ≤ mark` is buffered or in flight… */
  readonly mark: number;
  /** …or at this time (ms since the epoch). */
  readonly deadline: number;
  readonly resolve: () => void;
}

/** A keepalive body smaller than this is not worth a request of its own. */
const MIN_KEEPALIVE_BUDGET = 1024;
/** An idle client sends what it has not reported yet after this long (milliseconds). */
const REPORT_IDLE_MS = 10_000;

/**
 * Moves buffered events to the collector: batches by size and time, one
 * request at a time (plus keepalive requests when the page hides), honours
 * `Retry-After` and backs off, resends only throttled events, and tells the
 * sampler how each request went. Nothing here throws or rejects: every
 * failure ends as a counted outcome.
 */
export class Delivery {
  readonly buffer: PriorityBuffer;
  readonly counters: DeliveryCounters = { sent: 0, succeeded: 0, throttled: 0, failed: 0 };
  private readonly inFlight = new Set<readonly BufferEntry[]>();
  private inFlightEvents = 0;
  private keepaliveBytes = 0;
  /** The batch loop has a request out. */
  private sending = false;
  private seq = 0;
  /** When the buffer last went from empty to not empty: its oldest event's wait starts here. */
  private pendingSince = Infinity;
  /** Send back to back until the buffer is empty or a request fails. */
  private draining = false;
  /** No request starts before this time (ms): `Retry-After` or backoff. */
  private blockedUntil = 0;
  /** Consecutive requests that made no progress: the backoff exponent. */
  private failures = 0;
  private waiters: Waiter[] = [];
  private timer: TimerHandle | undefined;
  private wakeAt = Infinity;
  /**
   * The armed timer keeps the process alive. True exactly while someone
   * waits in `flush()` or `close()`: an idle SDK must not hold a process
   * open, and a pending flush must not let it end (in Node an unfinished
   * top-level `await` would exit with code 13 while `Retry-After` runs).
   */
  private timerKeepsAlive = false;
  /** Sending waits for persisted events to be restored, so they keep their place in the queues. */
  private ready: boolean;
  private stopped = false;

  private readonly onDrop: DeliveryHooks['onDrop'];
  private readonly diagnostics: Diagnostics;
  private readonly onInternalError: DeliveryHooks['onInternalError'];
  private readonly reports: ClientReports;
  private reportTimer: TimerHandle | undefined;
  /** Spreads requests at the rate the collector advised (pacing). */
  private readonly pace = new Pace();

  constructor(
    private readonly o: ResolvedOptions,
    private readonly sampler: DynamicSampler,
    hooks: DeliveryHooks,
  ) {
    this.onDrop = hooks.onDrop;
    this.diagnostics = hooks.diagnostics;
    this.onInternalError = hooks.onInternalError;
    this.reports = hooks.reports;
    this.buffer = new PriorityBuffer({ maxEvents: o.maxEvents, maxBytes: o.maxBytes }, (entry) => {
      this.onDrop('buffer_full', 1);
      this.reports.dropped('buffer_full', entry.event.type, entry.event.ts);
    });
    this.ready = o.persistence === undefined;
  }

  get eventsInFlight(): number {
    return this.inFlightEvents;
  }

  get consecutiveFailures(): number {
    return this.failures;
  }

  get retryAt(): number | null {
    let now = 0;
    try {
      now = this.o.clock.now();
    } catch (err) {
      this.onInternalError(err);
    }
    return this.blockedUntil > now ? this.blockedUntil : null;
  }

  /** An event a limit could refuse (not an error) was captured, before sampling: the pace's measure. */
  captured(now: number): void {
    this.pace.captured(now);
  }

  /** Buffers a captured event (`bytes`: its estimated size); sends soon if its batch is full. */
  enqueue(event: WireEvent, bytes: number, now: number): void {
    this.buffer.push({ event, bytes, seq: ++this.seq });
    if (this.pendingSince === Infinity) this.pendingSince = now;
    this.reschedule(now);
  }

  /** Puts events a previous run saved in front of everything captured since, then lets sending start. */
  restore(events: readonly { event: WireEvent; bytes: number }[]): void {
    // seq 0: older than any capture of this run, so every flush waits for them.
    this.buffer.requeue(events.map((e) => ({ ...e, seq: 0 })));
    this.ready = true;
    const now = this.o.clock.now();
    if (this.buffer.size > 0 && this.pendingSince === Infinity) this.pendingSince = now;
    this.reschedule(now);
  }

  /** Events buffered or in flight. */
  get pending(): number {
    return this.buffer.size + this.inFlightEvents;
  }

  /**
   * Resolves once every event buffered now has left (taken, rejected or
   * dropped), or at `deadline`. Sends back to back, retrying through
   * failures; waits for `Retry-After` and backoff (nothing is sent before
   * them), keeping the process alive meanwhile.
   */
  drain(deadline: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.stopped) return resolve();
      const now = this.o.clock.now();
      this.waiters.push({ mark: this.seq, deadline, resolve });
      this.trySend(now);
      this.settleWaiters(now);
      this.reschedule(now);
    });
  }

  /**
   * The page is being hidden: sends what fits in the keepalive budget now,
   * synchronously (uncompressed; no later task may run), unless `Retry-After`
   * forbids it, and saves the rest.
   */
  sendOnHide(): void {
    const now = this.o.clock.now();
    if (!this.stopped && this.ready && now >= this.blockedUntil) {
      let budget = KEEPALIVE_MAX_BYTES - this.keepaliveBytes;
      while (budget >= MIN_KEEPALIVE_BUDGET && this.buffer.size > 0) {
        const batch = this.buffer.take(this.o.batchSize, Math.min(budget, this.o.maxBatchBytes));
        const report = this.reports.next();
        let json = encodeBatch(
          batch.map((e) => e.event),
          report,
        );
        let bytes = utf8Length(json);
        while (bytes > budget && batch.length > 1) {
          this.buffer.requeue(batch.splice(Math.ceil(batch.length / 2)));
          json = encodeBatch(
            batch.map((e) => e.event),
            report,
          );
          bytes = utf8Length(json);
        }
        if (bytes > budget) {
          this.buffer.requeue(batch);
          break;
        }
        budget -= bytes;
        void this.send(batch, { json, bytes, report });
      }
    }
    void this.persist();
  }

  /**
   * Sends what is not yet reported in a request of its own (no events), once, unless a request is
   * out or `Retry-After` / backoff forbids it now: a report not taken waits for the next request,
   * the idle timer or the next flush. `atExit`: the last chance (`close()`), sent even during a
   * `Retry-After` (one small request; what it says is otherwise lost with the process).
   */
  async sendReport(atExit = false): Promise<void> {
    if (this.stopped || this.sending || !this.ready || !this.reports.unsent) return;
    if (!atExit && this.o.clock.now() < this.blockedUntil) return;
    this.sending = true;
    await this.send([]);
  }

  /**
   * Counts what is still buffered as lost at exit (`close()` without a persistence store: nothing
   * will send it), so the last report says so.
   */
  dropUnsent(): void {
    if (this.o.persistence !== undefined) return;
    for (const e of this.buffer.events()) this.reports.dropped('unsent_at_exit', e.type, e.ts);
  }

  /** Stops every timer and resolves every waiter; answers still in flight are counted when they come. */
  stop(): void {
    this.stopped = true;
    if (this.reportTimer !== undefined) this.o.clock.clearTimeout(this.reportTimer);
    this.reportTimer = undefined;
    if (this.timer !== undefined) this.o.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.wakeAt = Infinity;
    for (const w of this.waiters) w.resolve();
    this.waiters = [];
  }

  /** Saves everything not yet acknowledged, when a store is configured. Never rejects. */
  persist(): Promise<void> {
    const store = this.o.persistence;
    if (store === undefined || !this.ready) return Promise.resolve();
    try {
      const events: WireEvent[] = [];
      for (const batch of this.inFlight) for (const e of batch) events.push(e.event);
      for (const e of this.buffer.events()) events.push(e);
      const saved = Promise.resolve(store.save(events)).catch(this.onInternalError);
      if (typeof store.saveReport !== 'function') return saved;
      const report = Promise.resolve(store.saveReport(this.reports.state())).catch(this.onInternalError);
      return Promise.all([saved, report]).then(() => undefined);
    } catch (err) {
      this.onInternalError(err);
      return Promise.resolve();
    }
  }

  private wake = (): void => {
    try {
      this.timer = undefined;
      this.wakeAt = Infinity;
      this.timerKeepsAlive = false;
      if (this.stopped) return;
      const now = this.o.clock.now();
      this.trySend(now);
      this.settleWaiters(now);
      this.reschedule(now);
    } catch (err) {
      this.onInternalError(err);
    }
  };

  /**
   * Arms the one timer for the next moment anything is due: a send, or a
   * waiter's deadline. It keeps the process alive while anyone waits.
   */
  private reschedule(now: number): void {
    if (this.stopped) return;
    const keepAlive = this.waiters.length > 0;
    let at = Infinity;
    if (this.buffer.size > 0 && !this.sending && this.ready) {
      const due =
        this.draining || this.waiters.length > 0 || this.buffer.size >= this.o.batchSize
          ? now
          : this.pendingSince + this.o.flushIntervalMs;
      at = Math.max(due, this.blockedUntil, this.pacedUntil());
    }
    for (const w of this.waiters) if (w.deadline < at) at = w.deadline;
    // An earlier timer of the same kind fires first and re-evaluates; one of the other kind is
    // replaced, so a kept-alive timer never outlives the last waiter.
    if (at >= this.wakeAt && keepAlive === this.timerKeepsAlive) return;
    if (this.timer !== undefined) this.o.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.wakeAt = at;
    this.timerKeepsAlive = keepAlive;
    if (at === Infinity) return;
    this.timer = this.o.clock.setTimeout(this.wake, Math.max(0, at - now), { keepAlive });
  }

  /** A flush() or close() waiting sends at once: only Retry-After holds it, never the pace. */
  private pacedUntil(): number {
    return this.waiters.length > 0 ? -Infinity : this.pace.nextAt();
  }

  private trySend(now: number): void {
    if (this.sending || !this.ready || this.stopped || this.buffer.size === 0 || now < this.blockedUntil)
      return;
    if (now < this.pacedUntil()) return;
    const due =
      this.draining ||
      this.waiters.length > 0 ||
      this.buffer.size >= this.o.batchSize ||
      now >= this.pendingSince + this.o.flushIntervalMs;
    if (!due) return;
    this.draining = true;
    this.sending = true;
    const batch = this.buffer.take(this.o.batchSize, this.o.maxBatchBytes);
    this.pace.sent(batch.length, now);
    void this.send(batch);
  }

  /**
   * One request for `batch`. With `keepalive` the body is given and the
   * transport is called before the first `await`, i.e. synchronously.
   */
  private async send(
    batch: BufferEntry[],
    keepalive?: { json: string; bytes: number; report: WireReport | null },
  ): Promise<void> {
    const report = keepalive ? keepalive.report : this.reports.next();
    this.inFlight.add(batch);
    this.inFlightEvents += batch.length;
    if (keepalive) this.keepaliveBytes += keepalive.bytes;
    let outcome: Outcome;
    let response: TransportResponse | undefined;
    let failure: unknown;
    try {
      const request = keepalive
        ? this.request(batch, keepalive.json, false, true)
        : await this.encode(batch, report);
      try {
        response = await this.o.transport.send(request);
      } catch (err) {
        failure = err; // a network error
      }
      outcome = classify(response, batch.length, this.o.clock.now());
    } catch (err) {
      this.onInternalError(err);
      outcome = { kind: 'retryable', retryAfterMs: undefined };
    }
    this.inFlight.delete(batch);
    this.inFlightEvents -= batch.length;
    if (keepalive) this.keepaliveBytes -= keepalive.bytes;
    else this.sending = false;
    try {
      // A collector that answered 2xx, or 429 with the counts of what it took, read the body.
      if (report !== null && (outcome.kind === 'accepted' || isRecord(response?.body, 'accepted')))
        this.reports.taken(report);
      this.account(batch, outcome, response);
      this.settle(batch, outcome, keepalive !== undefined);
      if (batch.length > 0) this.tell(batch, outcome, response, failure);
    } catch (err) {
      this.onInternalError(err);
    }
  }

  /** Reports what the host should hear of a request: its problem, if any, and (`debug`) its outcome. */
  private tell(
    batch: readonly BufferEntry[],
    outcome: Outcome,
    response: TransportResponse | undefined,
    failure: unknown,
  ): void {
    if (this.diagnostics.tracing) {
      const answer = typeof response?.status === 'number' ? String(response.status) : 'no answer';
      this.diagnostics.trace(traceLine(batch.length, answer, outcome, this.retryAt));
    }
    const problem = requestProblem({
      endpoint: this.o.endpoint,
      events: batch.map((e) => e.event),
      apiKeySent: this.o.apiKey !== undefined,
      outcome,
      response,
      failure,
      pageOrigin: pageOrigin(),
    });
    if (problem !== undefined) this.diagnostics.report(problem);
  }

  /** What one answer means for each event of the batch, in the client reports. */
  private account(
    batch: readonly BufferEntry[],
    outcome: Outcome,
    response: TransportResponse | undefined,
  ): void {
    if (outcome.kind === 'retryable') return;
    if (outcome.kind === 'failed') {
      for (const e of batch) this.reports.dropped('client_error', e.event.type, e.event.ts);
      return;
    }
    const reasons = rejectionReasons(response?.body);
    const rejected = new Set(outcome.rejected);
    const throttled = new Set(outcome.kind === 'throttled' ? outcome.throttled : []);
    batch.forEach((e, i) => {
      if (rejected.has(i)) this.reports.rejected(reasons.get(i) ?? 'other', e.event.type, e.event.ts);
      else if (!throttled.has(i)) this.reports.delivered(e.event.type, e.event.ts);
    });
  }

  private async encode(batch: readonly BufferEntry[], report: WireReport | null): Promise<TransportRequest> {
    const json = encodeBatch(
      batch.map((e) => e.event),
      report,
    );
    const compress = this.o.gzip && json.length >= GZIP_MIN_BYTES && canGzip();
    return this.request(batch, compress ? await gzip(json) : json, compress, false);
  }

  private request(
    batch: readonly BufferEntry[],
    body: string | Uint8Array<ArrayBuffer>,
    gzipped: boolean,
    keepalive: boolean,
  ): TransportRequest {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    // The app, before the body: an overloaded collector refuses the apps that send most first.
    // Not from a page: a collector older than the header would refuse it in the CORS preflight.
    if (!IN_PAGE) headers['x-sluice-app'] = this.o.app;
    if (gzipped) headers['content-encoding'] = 'gzip';
    if (this.o.apiKey !== undefined) headers['x-api-key'] = this.o.apiKey;
    return { events: batch.map((e) => e.event), body, headers, keepalive };
  }

  /** Applies one answer: counts, sampler, requeue, wait; then continues the drain or waits. */
  private settle(batch: readonly BufferEntry[], outcome: Outcome, keepalive: boolean): void {
    const now = this.o.clock.now();
    let failed = true;
    switch (outcome.kind) {
      case 'accepted':
        failed = false;
        this.failures = 0;
        if (batch.length > 0) this.counters.succeeded++;
        if (outcome.advice !== undefined) this.sampler.onAdvice(outcome.advice);
        else if (!outcome.unconfirmed && batch.length > 0) this.sampler.onSuccess();
        this.pace.advised(outcome.advice);
        this.counters.sent += batch.length - outcome.rejected.length;
        if (outcome.rejected.length > 0) this.onDrop('rejected', outcome.rejected.length);
        break;
      case 'throttled': {
        const valid = batch.length - outcome.rejected.length;
        const taken = valid - outcome.throttled.length;
        // The collector took what the budget allowed: the rest passes once Retry-After has freed
        // more, so a 429 that took part of the batch waits for Retry-After only. Backoff grows
        // while 429s take nothing (a full queue, an overloaded collector).
        this.failures = taken > 0 ? 0 : this.failures + 1;
        if (batch.length > 0) this.counters.throttled++;
        // A request refused unread tells nothing of this app's rate (an overloaded collector
        // refuses the apps that send most first): it is waited out, with backoff, at the same rate.
        if (outcome.advice !== undefined) this.sampler.onAdvice(outcome.advice);
        else if (outcome.unread) this.sampler.onFailure();
        else this.sampler.onThrottled(valid > 0 ? taken / valid : 0);
        this.pace.advised(outcome.advice);
        this.counters.sent += taken;
        if (outcome.rejected.length > 0) this.onDrop('rejected', outcome.rejected.length);
        this.buffer.requeue(outcome.throttled.map((i) => batch[i]!));
        this.block(now, outcome.retryAfterMs);
        break;
      }
      case 'retryable':
        this.failures++;
        if (batch.length > 0) this.counters.failed++;
        this.sampler.onFailure();
        this.buffer.requeue(batch);
        this.block(now, outcome.retryAfterMs);
        break;
      case 'failed':
        // The collector answered: it is not overloaded, so no backoff; this batch can never pass.
        this.failures = 0;
        if (batch.length > 0) this.counters.failed++;
        this.sampler.onFailure();
        this.onDrop('client_error', batch.length);
        break;
    }
    if (this.buffer.size === 0) this.pendingSince = Infinity;
    if (failed || this.buffer.size === 0) {
      this.draining = false;
      if (!keepalive) void this.persist(); // end of a round: save what is left
    }
    this.settleWaiters(now);
    this.trySend(now);
    this.reschedule(now);
    this.armReportTimer();
  }

  /** When nothing is buffered nor sending but something is unreported: a report of its own, later. */
  private armReportTimer(): void {
    if (!this.reports.unsent && this.reportTimer !== undefined) {
      this.o.clock.clearTimeout(this.reportTimer);
      this.reportTimer = undefined;
    }
    if (this.reportTimer !== undefined || this.stopped || !this.reports.unsent) return;
    this.reportTimer = this.o.clock.setTimeout(() => {
      this.reportTimer = undefined;
      if (this.buffer.size === 0 && !this.sending) void this.sendReport();
      this.armReportTimer();
    }, REPORT_IDLE_MS);
  }

  private block(now: number, retryAfterMs: number | undefined): void {
    const delay = retryDelay(Math.max(1, this.failures), retryAfterMs, this.o.retry, this.o.random);
    this.blockedUntil = Math.max(this.blockedUntil, now + delay);
  }

  private settleWaiters(now: number): void {
    if (this.waiters.length === 0) return;
    let pending = this.buffer.minSeq();
    for (const batch of this.inFlight) for (const e of batch) if (e.seq < pending) pending = e.seq;
    this.waiters = this.waiters.filter((w) => {
      const done = pending > w.mark || now >= w.deadline;
      if (done) w.resolve();
      return !done;
    });
  }
}

function isRecord(v: unknown, key: string): boolean {
  return typeof v === 'object' && v !== null && key in v;
}

/** The collector's reason for each rejected index (`rejected: [{index, reason}]`). */
function rejectionReasons(body: unknown): Map<number, string> {
  const out = new Map<number, string>();
  const rejected = (body as { rejected?: unknown } | null)?.rejected;
  if (!Array.isArray(rejected)) return out;
  for (const r of rejected as Array<{ index?: unknown; reason?: unknown } | null>) {
    if (typeof r?.index === 'number' && typeof r.reason === 'string') out.set(r.index, r.reason);
  }
  return out;
}

/** One `debug` line per request: how many events went, the answer, and what became of them. */
function traceLine(size: number, answer: string, outcome: Outcome, retryAt: number | null): string {
  const head = `POST of ${size} event${size === 1 ? '' : 's'}: ${answer}`;
  const next = retryAt === null ? '' : `; next request at ${new Date(retryAt).toISOString()}`;
  switch (outcome.kind) {
    case 'accepted':
      return `${head}, ${size - outcome.rejected.length} taken, ${outcome.rejected.length} rejected`;
    case 'throttled': {
      const taken = size - outcome.rejected.length - outcome.throttled.length;
      return `${head}, ${taken} taken, ${outcome.throttled.length} throttled, ${outcome.rejected.length} rejected${next}`;
    }
    case 'retryable':
      return `${head}, all kept for a retry${next}`;
    case 'failed':
      return `${head}, all dropped`;
  }
}
