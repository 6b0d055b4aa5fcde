import type { OutcomeRow } from './outcome';

/** Counts by reason (a stage's losses). */
export type ByReason = Record<string, number>;

/** Where events were lost: the stage that decided it. */
export type LossStage = 'sdk' | 'collector' | 'storage' | 'queue' | 'shutdown';

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
  /** Not in the identity: events refused for now, by reason (their sender may send them again). */
  throttled: ByReason;
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
    losses: { sdk: {}, collector: {}, storage: {}, queue: {}, shutdown: {} },
    pending: { sdk: 0, pipeline: 0 },
    throttled: {},
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
    case 'shed':
      m.shed_requests += n;
      return;
  }
}

/** The loss map of `rows` (one app's summed counts). */
export function lossMapOf(rows: Iterable<OutcomeRow>): LossMap {
  const m = emptyMap();
  for (const r of rows) apply(m, r);
  return m;
}

/** One loss map per minute holding counts, oldest first. */
export function lossMapsByMinute(rows: readonly OutcomeRow[]): Array<LossMap & { minute: number }> {
  const byMinute = new Map<number, OutcomeRow[]>();
  for (const r of rows) (byMinute.get(r.minute) ?? byMinute.set(r.minute, []).get(r.minute))?.push(r);
  return [...byMinute.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([minute, minuteRows]) => ({ minute, ...lossMapOf(minuteRows) }));
}
