import { LatencyRecorder } from './latency';

/** What one load run observed, from the client side. */
export interface LoadResult {
  /** `performance.now()` when the first request left. */
  readonly startedAt: number;
  /** `performance.now()` when the last answer arrived. */
  readonly endedAt: number;
  /** Requests sent (answered or failed). */
  readonly requests: number;
  /** Events in the requests sent. */
  readonly sentEvents: number;
  /** Sum of `accepted` over 202 and 429 answers: events the server acknowledged. */
  readonly accepted: number;
  /** Answers by HTTP status. */
  readonly byStatus: Readonly<Record<number, number>>;
  /** Requests that got no HTTP answer (reset, refused, timeout). */
  readonly transportErrors: number;
  readonly firstTransportError: string | null;
  /** Number of the request a continuation of this run would send next (see `ClosedLoopOptions.recycle`). */
  readonly nextRequest: number;
  /** Latency of every answered request, from when it left (milliseconds). */
  readonly latency: LatencyRecorder;
  /** The same, by status. */
  readonly latencyByStatus: ReadonlyMap<number, LatencyRecorder>;
}

/** Accumulates a `LoadResult` as answers arrive. */
export class LoadTally {
  startedAt = 0;
  endedAt = 0;
  requests = 0;
  sentEvents = 0;
  accepted = 0;
  transportErrors = 0;
  firstTransportError: string | null = null;
  nextRequest = 0;
  readonly byStatus: Record<number, number> = {};
  readonly latency = new LatencyRecorder();
  readonly latencyByStatus = new Map<number, LatencyRecorder>();

  answered(status: number, accepted: number, ms: number): void {
    this.byStatus[status] = (this.byStatus[status] ?? 0) + 1;
    this.accepted += accepted;
    this.latency.record(ms);
    let byStatus = this.latencyByStatus.get(status);
    if (!byStatus) {
      byStatus = new LatencyRecorder();
      this.latencyByStatus.set(status, byStatus);
    }
    byStatus.record(ms);
  }

  failed(err: unknown): void {
    this.transportErrors++;
    this.firstTransportError ??= (err as Error).message ?? String(err);
  }

  result(): LoadResult {
    return this;
  }
}

/** Requests answered with `status` per second of the run. */
export function ratePerSecond(r: LoadResult, count: number): number {
  const seconds = (r.endedAt - r.startedAt) / 1000;
  return seconds > 0 ? count / seconds : 0;
}

export function statusCount(r: LoadResult, status: number): number {
  return r.byStatus[status] ?? 0;
}
