import { MetricAggregator, type ClosedSeries } from './aggregator';
import { sanitizeAttributes } from './attributes';
import { installPageHooks } from './browser-hooks';
import type { TimerHandle } from './clock';
import { ClientReports } from './client-report';
import { Delivery } from './delivery';
import { Diagnostics } from './diagnostics';
import { describeError, errorName, estimateChars, makeSource, sourceChars } from './events';
import { CAPTURE_LIMITS, isValidName, nameRefusal, truncate } from './limits';
import { resolveOptions, type AggregatedMetrics, type ClientOptions, type ResolvedOptions } from './options';
import { captureProblem, optionsProblem, type CaptureRefusal } from './problems';
import { DynamicSampler } from './sampler';
import { DROP_REASONS, type ClientStats, type DropReason } from './stats';
import { Uuid7Generator } from './uuid7';
import type { AttributeValue, EventType, Source, WireEvent } from './types';

/** Attributes as the host may pass them: values other than string, finite number and boolean are dropped. */
export type CaptureAttributes = Readonly<Record<string, AttributeValue | null | undefined>>;

/** The SDK's client. No method throws, no returned promise rejects. */
export interface Client {
  /** Captures an error (an `Error`, a string, anything thrown). Never aggregated; never sampled out dynamically. */
  error(err: unknown, attributes?: CaptureAttributes): void;
  /** Captures a lifecycle transition, e.g. `app.started`. Never aggregated. */
  lifecycle(name: string, attributes?: CaptureAttributes): void;
  /** Captures a metric sample; aggregated into `<name>_summary` when aggregation covers `name`. */
  metric(name: string, value: number, attributes?: CaptureAttributes): void;
  /** Captures a log line; `message` goes in the event's top-level `message`. */
  log(name: string, message: string, attributes?: CaptureAttributes): void;
  /**
   * Closes open aggregation windows and sends everything buffered, retrying
   * through failures. Resolves when it has all left (taken, or dropped as
   * counted in `stats().dropped`), or after `timeoutMs` (milliseconds,
   * default 30000); then saves what is left to the persistence store.
   * Honours `Retry-After`: waits rather than sends early. In Node it keeps
   * the process alive until it resolves.
   */
  flush(options?: { readonly timeoutMs?: number }): Promise<void>;
  /**
   * Stops capturing, sends everything left — retrying through failures —
   * for at most `timeoutMs` (milliseconds, default 5000), saves what is left
   * to the persistence store, removes page hooks and timers. Idempotent. In
   * Node it keeps the process alive until it resolves.
   */
  close(options?: { readonly timeoutMs?: number }): Promise<void>;
  /** A snapshot of rates, buffer and counters. */
  stats(): ClientStats;
}

const SUMMARY_SUFFIX = '_summary';
/** Most metric series aggregated at once; samples of further series leave one event each. */
const MAX_SERIES = 1000;
/** Most metric names whose `aggregation.metrics` predicate answer is remembered. */
const MAX_CACHED_NAMES = 1000;
/** Default deadline of `flush()` (milliseconds): a collector that stays away cannot hold a process forever. */
const DEFAULT_FLUSH_TIMEOUT_MS = 30_000;
const DEFAULT_CLOSE_TIMEOUT_MS = 5000;

/**
 * Creates a client. Never throws: options that cannot make a working client
 * (no endpoint, no app) give one that captures nothing and says why in
 * `stats().disabled`.
 */
export function createClient(options: ClientOptions): Client {
  try {
    const resolved = resolveOptions(options);
    if ('invalid' in resolved) return disabledClient(resolved.invalid, options);
    return new SluiceClient(resolved);
  } catch (err) {
    return disabledClient(err instanceof Error ? err.message : 'invalid options', options);
  }
}

class SluiceClient implements Client {
  private readonly source: Source;
  private readonly sourceLength: number;
  private readonly ids = new Uuid7Generator();
  private readonly sampler: DynamicSampler;
  private readonly delivery: Delivery;
  private readonly reports: ClientReports;
  private readonly diagnostics: Diagnostics;
  private readonly aggregator: MetricAggregator | undefined;
  private readonly aggregates: (name: string) => boolean;
  private readonly dropped = Object.fromEntries(DROP_REASONS.map((r) => [r, 0])) as Record<
    DropReason,
    number
  >;
  private captured = 0;
  private internalErrors = 0;
  private aggregationTimer: TimerHandle | undefined;
  private aggregationWakeAt = Infinity;
  private closing: Promise<void> | undefined;
  private readonly loaded: Promise<void>;
  private readonly removePageHooks: () => void;

  constructor(private readonly o: ResolvedOptions) {
    this.source = makeSource(o.app, o.version, o.env);
    this.sourceLength = sourceChars(this.source);
    this.diagnostics = new Diagnostics({
      onError: o.onError,
      debug: o.debug,
      onInternalError: this.internalError,
    });
    this.sampler = new DynamicSampler(o.sampleRate);
    this.reports = new ClientReports(o.app, () => this.ids.next(Math.floor(o.clock.now())));
    this.delivery = new Delivery(o, this.sampler, {
      onDrop: (reason, count) => (this.dropped[reason] += count),
      diagnostics: this.diagnostics,
      onInternalError: this.internalError,
      reports: this.reports,
    });
    this.aggregator = o.aggregation
      ? new MetricAggregator(o.aggregation.windowMs, MAX_SERIES, this.emitSummary)
      : undefined;
    this.aggregates = o.aggregation ? metricFilter(o.aggregation.metrics) : () => false;
    this.loaded = this.load();
    this.removePageHooks = o.pageHooks ? installPageHooks(this.onPageHide) : () => {};
  }

  error(err: unknown, attributes?: CaptureAttributes): void {
    try {
      if (this.closing) return this.drop('closed', 'error');
      const detail = describeError(err);
      this.capture('error', errorName(detail), { error: detail }, attributes);
    } catch (e) {
      this.internalError(e);
    }
  }

  lifecycle(name: string, attributes?: CaptureAttributes): void {
    try {
      if (this.closing) return this.drop('closed', 'lifecycle');
      if (!isValidName(name)) return this.refuse('lifecycle', name, nameRefusal(name));
      this.capture('lifecycle', name, {}, attributes);
    } catch (e) {
      this.internalError(e);
    }
  }

  log(name: string, message: string, attributes?: CaptureAttributes): void {
    try {
      if (this.closing) return this.drop('closed', 'log');
      if (!isValidName(name)) return this.refuse('log', name, nameRefusal(name));
      const text = truncate(
        typeof message === 'string' ? message : String(message),
        CAPTURE_LIMITS.maxStringLength,
      );
      this.capture('log', name, { message: text }, attributes);
    } catch (e) {
      this.internalError(e);
    }
  }

  metric(name: string, value: number, attributes?: CaptureAttributes): void {
    try {
      // A sample of an aggregated metric is not an event (its window's summary is): what it loses
      // is reported in samples, apart from the loss map's events.
      const folded = this.aggregator !== undefined && typeof name === 'string' && this.aggregates(name);
      if (this.closing) {
        if (!folded) return this.drop('closed', 'metric');
        this.dropped.closed++;
        return this.reports.droppedSample('closed', Math.floor(this.o.clock.now()));
      }
      if (typeof value !== 'number' || !Number.isFinite(value))
        return this.refuse('metric', name, 'value_invalid', folded);
      if (Math.abs(value) > CAPTURE_LIMITS.maxMetricMagnitude)
        return this.refuse('metric', name, 'value_out_of_range', folded);
      if (this.aggregator !== undefined && folded) {
        if (!isValidName(name, SUMMARY_SUFFIX)) return this.refuse('metric', name, nameRefusal(name), true);
        const now = Math.floor(this.o.clock.now());
        if (this.aggregator.add(name, value, sanitizeAttributes(attributes), now)) {
          if (this.aggregator.nextCloseAt < this.aggregationWakeAt) this.armAggregationTimer(now);
          return;
        }
      }
      if (!isValidName(name)) return this.refuse('metric', name, nameRefusal(name));
      this.capture('metric', name, { value }, attributes);
    } catch (e) {
      this.internalError(e);
    }
  }

  flush(options?: { readonly timeoutMs?: number }): Promise<void> {
    try {
      if (this.closing) return this.closing;
      const deadline = this.o.clock.now() + timeoutOf(options, DEFAULT_FLUSH_TIMEOUT_MS);
      return this.loaded
        .then(async () => {
          this.aggregator?.closeAll();
          await this.delivery.drain(deadline);
          if (this.delivery.pending === 0) await this.delivery.sendReport();
          if (this.delivery.pending > 0 || this.reports.unsent) await this.delivery.persist();
        })
        .catch(this.internalError);
    } catch (e) {
      this.internalError(e);
      return Promise.resolve();
    }
  }

  close(options?: { readonly timeoutMs?: number }): Promise<void> {
    try {
      this.closing ??= this.shutdown(timeoutOf(options, DEFAULT_CLOSE_TIMEOUT_MS)).catch(this.internalError);
      return this.closing;
    } catch (e) {
      this.internalError(e);
      return Promise.resolve();
    }
  }

  stats(): ClientStats {
    try {
      const buffer = this.delivery.buffer;
      const staticRate = this.o.sampleRate;
      return {
        dynamicRate: this.sampler.rate,
        effectiveRate: staticRate * this.sampler.rate,
        successStreak: this.sampler.streak,
        buffered: { ...buffer.countsByType(), total: buffer.size, bytes: buffer.bytes },
        aggregating: this.aggregator?.size ?? 0,
        inFlight: this.delivery.eventsInFlight,
        captured: this.captured,
        sent: this.delivery.counters.sent,
        dropped: { ...this.dropped },
        requests: {
          succeeded: this.delivery.counters.succeeded,
          throttled: this.delivery.counters.throttled,
          failed: this.delivery.counters.failed,
        },
        consecutiveFailures: this.delivery.consecutiveFailures,
        retryAt: this.delivery.retryAt,
        internalErrors: this.internalErrors,
      };
    } catch (e) {
      this.internalError(e);
      return emptyStats('stats unavailable');
    }
  }

  /** Samples, builds and buffers one event. `fields` are its type's own: value, error, message. */
  private capture(
    type: EventType,
    name: string,
    fields: Pick<WireEvent, 'value' | 'error' | 'message'>,
    attributes: CaptureAttributes | undefined,
  ): void {
    const ts = Math.floor(this.o.clock.now());
    if (!this.sampledIn(type, ts)) return;
    // One object shape for every event (absent fields undefined, which JSON leaves out):
    // V8 keeps one hidden class, and JSON.stringify its fast path.
    const event: WireEvent = {
      id: this.ids.next(ts),
      type,
      name,
      ts,
      source: this.source,
      value: fields.value,
      summary: undefined,
      error: fields.error,
      message: fields.message,
      attributes: sanitizeAttributes(attributes),
    };
    this.buffered(event, ts);
  }

  private buffered(event: WireEvent, now: number): void {
    this.captured++;
    this.reports.captured(event.type, event.ts);
    this.delivery.enqueue(event, estimateChars(event, this.sourceLength), now);
  }

  /** Static rate for every type; the dynamic rate on top for all but errors (docs/ARCHITECTURE.md). */
  private sampledIn(type: EventType, ts: number): boolean {
    if (type !== 'error') this.delivery.captured(ts);
    const rate = type === 'error' ? this.o.sampleRate : this.o.sampleRate * this.sampler.rate;
    if (rate >= 1 || this.o.random() < rate) return true;
    this.drop('sampled', type, ts);
    return false;
  }

  /** A closed aggregation window leaves as one summary event, sampled like any other metric. */
  private emitSummary = (closed: ClosedSeries): void => {
    if (!this.sampledIn('metric', closed.windowStart)) return;
    const event: WireEvent = {
      id: this.ids.next(closed.windowStart),
      type: 'metric',
      name: closed.name + SUMMARY_SUFFIX,
      ts: closed.windowStart,
      source: this.source,
      value: undefined,
      summary: closed.summary,
      error: undefined,
      message: undefined,
      attributes: closed.attributes,
    };
    this.buffered(event, Math.floor(this.o.clock.now()));
  };

  private armAggregationTimer(now: number): void {
    if (this.aggregationTimer !== undefined) this.o.clock.clearTimeout(this.aggregationTimer);
    this.aggregationWakeAt = this.aggregator?.nextCloseAt ?? Infinity;
    if (this.aggregationWakeAt === Infinity || this.closing) return;
    this.aggregationTimer = this.o.clock.setTimeout(
      this.onAggregationTimer,
      Math.max(0, this.aggregationWakeAt - now),
    );
  }

  private onAggregationTimer = (): void => {
    try {
      this.aggregationTimer = undefined;
      this.aggregationWakeAt = Infinity;
      const now = Math.floor(this.o.clock.now());
      this.aggregator?.closeEnded(now);
      this.armAggregationTimer(now);
    } catch (e) {
      this.internalError(e);
    }
  };

  private onPageHide = (): void => {
    try {
      this.aggregator?.closeAll();
      this.delivery.sendOnHide();
    } catch (e) {
      this.internalError(e);
    }
  };

  private async load(): Promise<void> {
    const store = this.o.persistence;
    if (store === undefined) return;
    let saved: readonly WireEvent[] = [];
    try {
      saved = await store.load();
    } catch (e) {
      this.internalError(e);
    }
    const entries = Array.isArray(saved) ? saved : [];
    try {
      if (typeof store.loadReport === 'function') this.reports.restore(await store.loadReport());
    } catch (e) {
      this.internalError(e);
    }
    this.delivery.restore(
      entries.map((event) => ({ event, bytes: estimateChars(event, sourceChars(event.source)) })),
    );
  }

  private async shutdown(timeoutMs: number): Promise<void> {
    this.removePageHooks();
    const start = this.o.clock.now();
    await this.loaded;
    this.aggregator?.closeAll();
    if (this.aggregationTimer !== undefined) this.o.clock.clearTimeout(this.aggregationTimer);
    this.aggregationTimer = undefined;
    await this.delivery.drain(start + timeoutMs);
    this.delivery.dropUnsent();
    // Twice at most: a report left outstanding, then what was counted after it (the exit's own).
    await this.delivery.sendReport(true);
    await this.delivery.sendReport(true);
    this.delivery.stop();
    await this.delivery.persist();
  }

  /** An event lost before it was built: counted as captured and dropped (the loss map's `sdk` stage). */
  private drop(reason: 'sampled' | 'closed', type: EventType, ts = Math.floor(this.o.clock.now())): void {
    this.dropped[reason]++;
    this.reports.captured(type, ts);
    this.reports.dropped(reason, type, ts);
  }

  /**
   * An event refused at capture: counted as `invalid`, and reported (a mistake in the host's code);
   * a sample of an aggregated metric (`sample`) in the report's samples, not as an event.
   */
  private refuse(method: EventType, name: unknown, reason: CaptureRefusal, sample = false): void {
    this.dropped.invalid++;
    const ts = Math.floor(this.o.clock.now());
    if (sample) this.reports.droppedSample('invalid', ts);
    else {
      this.reports.captured(method, ts);
      this.reports.dropped('invalid', method, ts);
    }
    this.diagnostics.report(captureProblem(method, name, reason));
  }

  private internalError = (_err: unknown): void => {
    this.internalErrors++;
  };
}

function timeoutOf(options: { readonly timeoutMs?: number } | undefined, fallback: number): number {
  const t = options?.timeoutMs;
  return typeof t === 'number' && t >= 0 ? t : fallback;
}

/** Which metric names aggregate. A predicate's answers are cached per name (names are few); one that throws means no. */
function metricFilter(metrics: AggregatedMetrics): (name: string) => boolean {
  if (metrics === 'all') return () => true;
  if (typeof metrics === 'function') {
    const cache = new Map<string, boolean>();
    return (name) => {
      let yes = cache.get(name);
      if (yes === undefined) {
        try {
          yes = metrics(name) === true;
        } catch {
          yes = false;
        }
        if (cache.size < MAX_CACHED_NAMES) cache.set(name, yes);
      }
      return yes;
    };
  }
  const names = new Set(Array.isArray(metrics) ? metrics : []);
  return (name) => names.has(name);
}

function emptyStats(disabled: string): ClientStats {
  const zero = { metric: 0, log: 0, lifecycle: 0, error: 0 };
  return {
    dynamicRate: 1,
    effectiveRate: 0,
    successStreak: 0,
    buffered: { ...zero, total: 0, bytes: 0 },
    aggregating: 0,
    inFlight: 0,
    captured: 0,
    sent: 0,
    dropped: Object.fromEntries(DROP_REASONS.map((r) => [r, 0])) as Record<DropReason, number>,
    requests: { succeeded: 0, throttled: 0, failed: 0 },
    consecutiveFailures: 0,
    retryAt: null,
    internalErrors: 0,
    disabled,
  };
}

/**
 * A client that does nothing, for options that cannot work. The mistake is reported as any
 * problem is (to `onError`, or once on the console), with what could be read of the options.
 */
function disabledClient(reason: string, options: unknown): Client {
  try {
    const given = (typeof options === 'object' && options !== null ? options : {}) as Partial<ClientOptions>;
    new Diagnostics({
      onError: typeof given.onError === 'function' ? given.onError : undefined,
      debug: given.debug === true,
      onInternalError: () => {},
    }).report(optionsProblem(reason));
  } catch {
    // options whose very reading throws: the client still does nothing, quietly
  }
  const noop = (): void => {};
  return {
    error: noop,
    lifecycle: noop,
    metric: noop,
    log: noop,
    flush: () => Promise.resolve(),
    close: () => Promise.resolve(),
    stats: () => emptyStats(reason),
  };
}
