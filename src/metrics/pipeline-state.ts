import type { Clock } from '../clock';
import type { AppActivity, AppTally } from './app-activity';
import type { Metrics } from './instruments';

/*
 * The collector's own state as one JSON document (`GET /pipeline`): what the console's pipeline
 * view draws, and what a script can read instead of Prometheus text. Sampled once a second from
 * the instruments the components already feed (so it always agrees with /metrics) and from the
 * components themselves (lanes, writer, stream, per-app tallies); rates are differences between
 * samples.
 */

/** A lane's fill against its capacity. */
export interface LaneState {
  readonly name: string;
  readonly events: number;
  readonly capacity: number;
  readonly bytes: number;
  readonly capacityBytes: number;
}

/** The writer loop of tiers 1–3. */
export interface WriterState {
  readonly inFlight: number;
  readonly maxInFlight: number;
  /** Events committed per second over the last 5 s. */
  readonly drainPerSecond: number;
}

/** The JetStream stream of tier 4, as the last background check saw it. */
export interface QueueState {
  readonly streamMessages: number;
  readonly streamBytes: number;
  readonly streamMaxBytes: number;
  /** Messages removed from the stream per second (acked by workers), over the last 5 s. */
  readonly drainMessagesPerSecond: number;
  /** Events published by this collector and awaiting their ack. */
  readonly pendingAcks: number;
}

export interface PipelineHealth {
  readonly ready: boolean;
  readonly draining: boolean;
  /** `not_checked`: a tier-4 collector does not watch the database the workers write. */
  readonly storage: 'up' | 'down' | 'not_checked';
  /** `insurance`: Redis failed and the in-memory insurance limiter answers. */
  readonly redis: 'off' | 'up' | 'down' | 'insurance';
  readonly nats: 'off' | 'up' | 'down';
}

export interface PipelineSources {
  readonly mode: 'direct' | 'ingest';
  readonly storage: 'postgres' | 'sqlite';
  readonly metrics: Metrics;
  /** Empty in tier 4 (no lanes in the process). */
  readonly lanes: () => readonly LaneState[];
  readonly writer: (() => WriterState) | null;
  readonly queue: (() => QueueState) | null;
  readonly activity: AppActivity;
  /** An app's rate limit in events per second; null when it has none. */
  readonly limitPerSecond: (app: string) => number | null;
  readonly health: () => PipelineHealth;
  readonly clock: Clock;
  /** The read standby (`SLUICE_DATABASE_READ_URL`), checked at each sample; absent without one. */
  readonly readStandby?: ReadStandbySource;
}

/** The standby as last checked (`GET /pipeline`, `read_standby`). */
export interface ReadStandbyState {
  /** Reachable and replaying (in recovery). */
  readonly up: boolean;
  /** WAL the primary wrote that the standby has not replayed (bytes); null when unknown. */
  readonly lagBytes: number | null;
  /**
   * Age of the last transaction the standby replayed while it is behind (seconds); 0 when it has
   * replayed all the primary wrote; null when unknown.
   */
  readonly lagSeconds: number | null;
  /** Last position replayed (`X/Y`); null when unknown. */
  readonly replayedLsn: string | null;
  /** When it was checked (milliseconds since the epoch); null before the first check. */
  readonly checkedAt: number | null;
  /** Why it is down, or why its lag is unknown. */
  readonly error: string | null;
}

/** What the pipeline state shows of a read standby. */
export interface ReadStandbySource {
  current(): ReadStandbyState;
  check(): Promise<unknown>;
}

/** Cumulative counts at one sample. */
interface Totals {
  readonly at: number;
  readonly received: number;
  readonly accepted: number;
  readonly rejected: number;
  readonly throttled: number;
  readonly shedRequests: number;
  readonly stored: number;
  readonly dropped: number;
  readonly batches: number;
  readonly batchEvents: number;
  readonly commitSeconds: number;
  /** Cumulative commit counts per bucket of `sluice_flush_duration_seconds`, `le` ascending. */
  readonly commitBuckets: ReadonlyArray<{ readonly le: number; readonly count: number }>;
  readonly writeRetries: number;
  readonly writeErrors: number;
}

const RATE_KEYS = [
  'received',
  'accepted',
  'rejected',
  'throttled',
  'shedRequests',
  'stored',
  'dropped',
] as const;
type RateKey = (typeof RATE_KEYS)[number];
const SNAKE: Readonly<Record<RateKey, string>> = {
  received: 'received',
  accepted: 'accepted',
  rejected: 'rejected',
  throttled: 'throttled',
  shedRequests: 'shed_requests',
  stored: 'stored',
  dropped: 'dropped',
};

/** Seconds of history kept (one sample per second). */
const HISTORY_SAMPLES = 60;
/** Window of the writer figures and of the per-app rates (samples). */
const WRITER_WINDOW = 10;
const APP_WINDOW = 5;
/** Apps listed as the busiest. */
const BUSIEST_APPS = 10;
/** An app without a decision for this many samples is forgotten. */
const APP_IDLE_SAMPLES = 120;

interface MetricValue {
  readonly value: number;
  readonly labels: Record<string, string | number>;
  readonly metricName?: string;
}

async function valuesOf(metric: { get(): Promise<{ values: MetricValue[] }> }): Promise<MetricValue[]> {
  return (await metric.get()).values;
}

function sum(values: readonly MetricValue[], keep: (v: MetricValue) => boolean = () => true): number {
  let total = 0;
  for (const v of values) if (keep(v)) total += v.value;
  return total;
}

const named = (suffix: string) => (v: MetricValue) => v.metricName?.endsWith(suffix) === true;

/** Reads the cumulative counts of the instruments. */
async function readTotals(m: Metrics, at: number): Promise<Totals> {
  const [received, accepted, rejected, throttled, requests, stored, dropped, batch, flush, retries, errors] =
    await Promise.all([
      valuesOf(m.eventsReceived),
      valuesOf(m.eventsAccepted),
      valuesOf(m.eventsRejected),
      valuesOf(m.eventsThrottled),
      valuesOf(m.requestsRejected),
      valuesOf(m.eventsStored),
      valuesOf(m.eventsDropped),
      valuesOf(m.batchSize),
      valuesOf(m.flushDuration),
      valuesOf(m.writeRetries),
      valuesOf(m.writeErrors),
    ]);
  return {
    at,
    received: sum(received),
    accepted: sum(accepted),
    rejected: sum(rejected),
    throttled: sum(throttled),
    shedRequests: sum(requests, (v) => v.labels.code === 'overloaded'),
    stored: sum(stored),
    dropped: sum(dropped),
    batches: sum(batch, named('_count')),
    batchEvents: sum(batch, named('_sum')),
    commitSeconds: sum(flush, named('_sum')),
    commitBuckets: flush
      .filter(named('_bucket'))
      .map((v) => ({ le: v.labels.le === '+Inf' ? Infinity : Number(v.labels.le), count: v.value }))
      .sort((a, b) => a.le - b.le),
    writeRetries: sum(retries),
    writeErrors: sum(errors),
  };
}

/** The upper bound (ms) of the bucket holding the 99th percentile of the commits between two samples. */
function p99Ms(from: Totals, to: Totals): number | null {
  const counts = to.commitBuckets.map((b, i) => ({
    le: b.le,
    count: b.count - (from.commitBuckets[i]?.count ?? 0),
  }));
  const total = counts[counts.length - 1]?.count ?? 0;
  if (total === 0) return null;
  const at = counts.find((b) => b.count >= total * 0.99);
  if (at === undefined || at.le === Infinity) {
    const finite = counts.filter((b) => b.le !== Infinity);
    return (finite[finite.length - 1]?.le ?? 0) * 1000;
  }
  return at.le * 1000;
}

const round = (n: number, digits = 1): number => Math.round(n * 10 ** digits) / 10 ** digits;

interface AppSample {
  readonly at: number;
  readonly tallies: ReadonlyMap<string, Readonly<AppTally>>;
}

/** Samples the pipeline once a second and answers `GET /pipeline`. */
export class PipelineState {
  private readonly history: Totals[] = [];
  private readonly appHistory: AppSample[] = [];
  private readonly startedAt: number;

  constructor(private readonly s: PipelineSources) {
    this.startedAt = s.clock.now();
  }

  /** Takes one sample; the composition root calls it every second. */
  async sample(): Promise<void> {
    await this.s.readStandby?.check();
    const totals = await readTotals(this.s.metrics, this.s.clock.now());
    this.history.push(totals);
    if (this.history.length > HISTORY_SAMPLES + 1) this.history.shift();
    const { activity } = this.s;
    activity.tick();
    activity.forgetIdle(APP_IDLE_SAMPLES);
    const tallies = new Map<string, AppTally>();
    for (const [app, t] of activity.all) tallies.set(app, { ...t });
    this.appHistory.push({ at: totals.at, tallies });
    if (this.appHistory.length > APP_WINDOW + 1) this.appHistory.shift();
  }

  /** The state as `GET /pipeline` answers it (docs: the console page, "The pipeline endpoint"). */
  snapshot(): Record<string, unknown> {
    const now = this.s.clock.now();
    const last = this.history[this.history.length - 1];
    const previous = this.history[this.history.length - 2];
    return {
      at: now,
      started_at: this.startedAt,
      sampled_at: last?.at ?? null,
      mode: this.s.mode,
      storage: this.s.storage,
      rates: last !== undefined && previous !== undefined ? this.rates(previous, last) : null,
      totals: last === undefined ? null : this.totalsOf(last),
      history: this.history.slice(1).map((t, i) => this.rates(this.history[i] as Totals, t)),
      lanes: this.s.lanes().map((l) => ({
        name: l.name,
        events: l.events,
        capacity: l.capacity,
        bytes: l.bytes,
        capacity_bytes: l.capacityBytes,
      })),
      writer: this.writer(),
      queue: this.queue(),
      apps: this.busiestApps(),
      health: this.s.health(),
      read_standby: this.readStandby(),
    };
  }

  private readStandby(): Record<string, unknown> | null {
    if (this.s.readStandby === undefined) return null;
    const s = this.s.readStandby.current();
    return {
      up: s.up,
      lag_seconds: s.lagSeconds === null ? null : round(s.lagSeconds, 3),
      lag_bytes: s.lagBytes,
      replayed_lsn: s.replayedLsn,
      checked_at: s.checkedAt,
      error: s.error,
    };
  }

  private totalsOf(t: Totals): Record<string, number> {
    const out: Record<string, number> = {};
    for (const k of RATE_KEYS) out[SNAKE[k]] = t[k];
    return out;
  }

  private rates(from: Totals, to: Totals): Record<string, number> {
    const seconds = Math.max((to.at - from.at) / 1000, 0.001);
    const out: Record<string, number> = { at: to.at };
    for (const k of RATE_KEYS) out[SNAKE[k]] = round((to[k] - from[k]) / seconds);
    return out;
  }

  private writer(): Record<string, unknown> | null {
    if (this.s.writer === null) return null;
    const w = this.s.writer();
    const last = this.history[this.history.length - 1];
    const first = this.history[Math.max(0, this.history.length - 1 - WRITER_WINDOW)];
    const window = last !== undefined && first !== undefined && last !== first ? { first, last } : null;
    const batches = window === null ? 0 : window.last.batches - window.first.batches;
    const seconds = window === null ? 0 : (window.last.at - window.first.at) / 1000;
    return {
      in_flight: w.inFlight,
      max_in_flight: w.maxInFlight,
      drain_per_s: round(w.drainPerSecond),
      window_s: round(seconds),
      batches_per_s: window === null ? null : round(batches / seconds),
      events_per_batch:
        window === null || batches === 0
          ? null
          : round((window.last.batchEvents - window.first.batchEvents) / batches),
      commit_ms_mean:
        window === null || batches === 0
          ? null
          : round(((window.last.commitSeconds - window.first.commitSeconds) / batches) * 1000, 2),
      commit_ms_p99: window === null ? null : p99Ms(window.first, window.last),
      retries_per_s:
        window === null ? null : round((window.last.writeRetries - window.first.writeRetries) / seconds),
      errors_per_s:
        window === null ? null : round((window.last.writeErrors - window.first.writeErrors) / seconds),
    };
  }

  private queue(): Record<string, number> | null {
    if (this.s.queue === null) return null;
    const q = this.s.queue();
    return {
      stream_messages: q.streamMessages,
      stream_bytes: q.streamBytes,
      stream_max_bytes: q.streamMaxBytes,
      drain_messages_per_s: round(q.drainMessagesPerSecond),
      pending_acks: q.pendingAcks,
    };
  }

  /** The apps with the most events decided per second over the last few samples, with their limit use. */
  private busiestApps(): Array<Record<string, unknown>> {
    const last = this.appHistory[this.appHistory.length - 1];
    const first = this.appHistory[0];
    if (last === undefined || first === undefined || last === first) return [];
    const seconds = (last.at - first.at) / 1000;
    const rows = [...last.tallies].map(([app, t]) => {
      const before = first.tallies.get(app);
      const accepted = (t.accepted - (before?.accepted ?? 0)) / seconds;
      const errors = (t.errors - (before?.errors ?? 0)) / seconds;
      const throttled = (t.throttled - (before?.throttled ?? 0)) / seconds;
      const limit = this.s.limitPerSecond(app);
      return {
        app,
        accepted_per_s: round(accepted),
        errors_per_s: round(errors),
        throttled_per_s: round(throttled),
        limit_per_s: limit,
        // Errors never spend the rate limit.
        limit_use: limit === null ? null : round((accepted - errors) / limit, 3),
      };
    });
    return rows
      .filter((r) => r.accepted_per_s + r.throttled_per_s > 0)
      .sort((a, b) => b.accepted_per_s + b.throttled_per_s - (a.accepted_per_s + a.throttled_per_s))
      .slice(0, BUSIEST_APPS);
  }
}
