import { MINUTE_MS, type OutcomeRow } from './outcome';

/** Counts by reason (a stage's losses). */
export type ByReason = Record<string, number>;

/**
 * Where events were lost: the stage that decided it; `unrecorded` for events pending longer than
 * any stage can hold them (by where they were last pending: `sdk`, `pipeline`).
 */
export type LossStage = 'sdk' | 'collector' | 'storage' | 'queue' | 'shutdown' | 'unrecorded';

/**
 * The loss map of one app over a window (docs/http-api.md, "GET /v1/outcomes"). The identity
 * `generated = stored + lost + pending.sdk + pending.pipeline` holds for every window by
 * construction; what makes it worth checking is that `pending` is what is still on its way: once
 * the SDKs have reported and the pipeline has drained it must be 0, and a `pending` that stays is
 * an event whose fate no stage recorded (a process killed with events in memory).
 */
export interface LossMap {
  /** Captured by reporting SDKs, plus what other senders (OTLP, plain HTTP) brought to a collector. */
  generated: number;
  /** Rows stored (counted in the transactions that inserted them; duplicates are not). */
  stored: number;
  /** Σ of `losses`. */
  lost: number;
  losses: Record<LossStage, ByReason>;
  pending: {
    /** Captured and not yet delivered nor lost, as the SDKs last reported (their buffers and requests in flight). */
    sdk: number;
    /** Handed to a collector and not yet stored nor lost: in lanes, in the stream, in a worker's hands. */
    pipeline: number;
  };
  /**
   * Part of `generated`: events that later stages counted (stored, delivered, lost) in minutes
   * past the horizon with no count of where they came from (a process killed before it wrote its
   * counts): without it `pending` would stay negative.
   */
  generated_unrecorded: number;
  /** Not in the identity: events refused for now, by reason (their sender may send them again). */
  throttled: ByReason;
  /**
   * Not in the identity, and counted in samples: samples of aggregated metrics the SDKs lost
   * before folding them into a summary, by reason. The map's unit is the event as stored, and a
   * summary is one event however many samples it folds.
   */
  dropped_samples: ByReason;
  /**
   * Not in the identity: requests refused unread (429 `overloaded`) in the window's minutes of
   * receipt. Their events were never read, so they are counted in requests; the sender resends them.
   */
  shed_requests: number;
}

function emptyMap(): LossMap {
  return {
    generated: 0,
    stored: 0,
    lost: 0,
    losses: { sdk: {}, collector: {}, storage: {}, queue: {}, shutdown: {}, unrecorded: {} },
    pending: { sdk: 0, pipeline: 0 },
    generated_unrecorded: 0,
    throttled: {},
    dropped_samples: {},
    shed_requests: 0,
  };
}

function addTo(by: ByReason, reason: string, n: number): void {
  by[reason] = (by[reason] ?? 0) + n;
}

/** Where a row counts; one place for the whole arithmetic of the identity. */
function apply(m: LossMap, r: OutcomeRow): void {
  const n = r.count;
  const loss = (stage: LossStage): void => {
    addTo(m.losses[stage], r.reason, n);
    m.lost += n;
  };
  switch (r.outcome) {
    case 'captured':
      m.generated += n;
      m.pending.sdk += n;
      return;
    case 'sdk_dropped':
      loss('sdk');
      m.pending.sdk -= n;
      return;
    case 'sdk_rejected':
      loss('collector');
      m.pending.sdk -= n;
      return;
    case 'sdk_delivered':
      m.pending.sdk -= n;
      m.pending.pipeline += n;
      return;
    case 'accepted':
      // The SDK's own events are counted by its reports (sdk_delivered): counting the collector's
      // acceptance too would count an event twice, and an acceptance whose answer was lost twice.
      if (r.origin !== 'direct') return;
      m.generated += n;
      m.pending.pipeline += n;
      return;
    case 'rejected':
      if (r.origin !== 'direct') return;
      m.generated += n;
      loss('collector');
      return;
    case 'stored':
      m.stored += n;
      m.pending.pipeline -= n;
      return;
    case 'duplicate':
      // A copy of a `direct` request the database already held: it was counted as generated and
      // taken into the pipeline when accepted. An SDK's copy was never counted twice (its report
      // counts each event once), so it has no place here.
      if (r.origin !== 'direct') return;
      loss('storage');
      m.pending.pipeline -= n;
      return;
    case 'refused':
      loss('storage');
      m.pending.pipeline -= n;
      return;
    case 'dead_lettered':
    case 'expired':
      loss('queue');
      m.pending.pipeline -= n;
      return;
    case 'dropped':
      loss('shutdown');
      m.pending.pipeline -= n;
      return;
    case 'throttled':
      addTo(m.throttled, r.reason, n);
      return;
    case 'sdk_samples_dropped':
      addTo(m.dropped_samples, r.reason, n);
      return;
    case 'shed':
      m.shed_requests += n;
      return;
  }
}

/**
 * When pending ages out: a minute of events' `ts` that ended more than `horizonMs` before `now`
 * holds nothing any stage can still deliver (docs/http-api.md, "GET /v1/outcomes").
 */
export interface PendingHorizon {
  /** Epoch milliseconds. */
  readonly now: number;
  /** Longest a stage may hold an event, past the end of its minute (milliseconds). */
  readonly horizonMs: number;
}

function minutesOf(rows: Iterable<OutcomeRow>): Map<number, OutcomeRow[]> {
  const byMinute = new Map<number, OutcomeRow[]>();
  for (const r of rows) (byMinute.get(r.minute) ?? byMinute.set(r.minute, []).get(r.minute))?.push(r);
  return byMinute;
}

/**
 * Settles the pending of one minute past the horizon, `p` being that minute's own pending: what
 * one stage has in excess and the other lacks moved between them unrecorded (a report lost with
 * its collector) and cancels out; what is left over is either events no stage holds any more
 * (`losses.unrecorded`, by where they were pending) or, negative, events counted downstream whose
 * origin was never counted (`generated_unrecorded`). `m`'s pending loses the minute's.
 */
function settle(m: LossMap, p: LossMap['pending']): void {
  m.pending.sdk -= p.sdk;
  m.pending.pipeline -= p.pipeline;
  let { sdk, pipeline } = p;
  if (sdk * pipeline < 0) {
    const moved = Math.min(Math.abs(sdk), Math.abs(pipeline));
    sdk -= Math.sign(sdk) * moved;
    pipeline -= Math.sign(pipeline) * moved;
  }
  if (sdk + pipeline > 0) {
    if (sdk > 0) addTo(m.losses.unrecorded, 'sdk', sdk);
    if (pipeline > 0) addTo(m.losses.unrecorded, 'pipeline', pipeline);
    m.lost += sdk + pipeline;
  } else if (sdk + pipeline < 0) {
    m.generated -= sdk + pipeline;
    m.generated_unrecorded -= sdk + pipeline;
  }
}

/**
 * A loss map built minute by minute: the rows of one minute at a time, oldest minute first, each
 * minute's pending settled as it is added when the minute is past `horizon` (`settle`). What
 * `lossMapOf` builds, in steps a read can spread over turns of the event loop.
 */
export class LossMapTally {
  readonly map: LossMap = emptyMap();

  constructor(private readonly horizon?: PendingHorizon) {}

  /** The rows of `minute`, after those of every earlier minute. */
  addMinute(minute: number, rows: readonly OutcomeRow[]): void {
    for (const r of rows) apply(this.map, r);
    const h = this.horizon;
    if (h === undefined || minute + MINUTE_MS + h.horizonMs > h.now) return;
    const own = emptyMap();
    for (const r of rows) apply(own, r);
    if (own.pending.sdk !== 0 || own.pending.pipeline !== 0) settle(this.map, own.pending);
  }
}

/**
 * The loss map of `rows` (one app's summed counts). With `horizon`, the pending of each minute
 * past it is settled (`settle`): pending is then only what a stage can still deliver, and is
 * never negative once the counts of a minute have all arrived.
 */
export function lossMapOf(rows: Iterable<OutcomeRow>, horizon?: PendingHorizon): LossMap {
  const tally = new LossMapTally(horizon);
  for (const [minute, minuteRows] of minutesOf(rows)) tally.addMinute(minute, minuteRows);
  return tally.map;
}

/** One loss map per minute holding counts, oldest first (each settled past `horizon`). */
export function lossMapsByMinute(
  rows: readonly OutcomeRow[],
  horizon?: PendingHorizon,
): Array<LossMap & { minute: number }> {
  return [...minutesOf(rows).entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([minute, minuteRows]) => ({ minute, ...lossMapOf(minuteRows, horizon) }));
}
