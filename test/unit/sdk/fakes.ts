import type { Clock, TimerHandle, TimerOptions } from '../../../sdk/src/clock';
import type { Transport, TransportRequest, TransportResponse } from '../../../sdk/src/transport';
import type { WireEvent } from '../../../sdk/src/types';

/** Lets every pending promise continuation run (no I/O: only the microtask and immediate queues). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

interface FakeTimer {
  readonly id: number;
  readonly at: number;
  readonly fn: () => void;
  readonly keepAlive: boolean;
}

/** A clock whose time moves only when a test says so; timers fire in time order as it passes them. */
export class FakeClock implements Clock {
  private t: number;
  private nextId = 1;
  private readonly timers = new Map<number, FakeTimer>();

  constructor(start = Date.UTC(2025, 5, 1, 12, 0, 0)) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number, options?: TimerOptions): TimerHandle {
    const id = this.nextId++;
    this.timers.set(id, { id, at: this.t + Math.max(0, ms), fn, keepAlive: options?.keepAlive === true });
    return id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle as number);
  }

  get pendingTimers(): number {
    return this.timers.size;
  }

  /** Pending timers that would keep a Node process alive. */
  get keepAliveTimers(): number {
    let n = 0;
    for (const timer of this.timers.values()) if (timer.keepAlive) n++;
    return n;
  }

  /** Moves time forward by `ms`, firing due timers in order and settling promises after each. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      await settle();
      let next: FakeTimer | undefined;
      for (const timer of this.timers.values()) {
        if (timer.at <= end && (next === undefined || timer.at < next.at)) next = timer;
      }
      if (next === undefined) break;
      this.timers.delete(next.id);
      this.t = Math.max(this.t, next.at);
      next.fn();
    }
    this.t = end;
    await settle();
  }
}

export interface RecordedRequest {
  /** Fake-clock time the request was sent. */
  readonly at: number;
  readonly events: readonly WireEvent[];
  readonly request: TransportRequest;
}

/** What the fake collector answers to one request; an `Error` is a network error. */
export type Answer = TransportResponse | Error;

/** A transport that records requests and answers from a script (default: all accepted). */
export class FakeTransport implements Transport {
  /** Requests that carried events. */
  readonly requests: RecordedRequest[] = [];
  /** Requests that carried only a client report. */
  readonly reportRequests: RecordedRequest[] = [];
  private readonly script: ((req: TransportRequest) => Answer)[] = [];

  constructor(
    private readonly clock: Clock,
    private fallback: (req: TransportRequest) => Answer = (req) => accepted(req.events.length),
  ) {}

  /** Answers the next requests in order with these, then the fallback. */
  answer(...answers: (Answer | ((req: TransportRequest) => Answer))[]): this {
    for (const a of answers) this.script.push(typeof a === 'function' ? a : () => a);
    return this;
  }

  answerAlways(fallback: (req: TransportRequest) => Answer): this {
    this.fallback = fallback;
    return this;
  }

  async send(request: TransportRequest): Promise<TransportResponse> {
    // A client report alone (no events) is answered as the collector answers by default, without
    // taking a scripted answer: tests script what happens to events.
    if (request.events.length === 0) {
      this.reportRequests.push({ at: this.clock.now(), events: request.events, request });
      const answer = this.fallback(request);
      if (answer instanceof Error) throw answer;
      return answer;
    }
    this.requests.push({ at: this.clock.now(), events: request.events, request });
    const answer = (this.script.shift() ?? this.fallback)(request);
    if (answer instanceof Error) throw answer;
    return answer;
  }

  /** Every event sent so far, in order, retries included. */
  get sentEvents(): WireEvent[] {
    return this.requests.flatMap((r) => [...r.events]);
  }
}

export function accepted(n: number, rejected: number[] = []): TransportResponse {
  return {
    status: 202,
    body: {
      accepted: n - rejected.length,
      rejected: rejected.map((index) => ({ index, reason: 'name_invalid' })),
    },
  };
}

export function throttled(
  n: number,
  throttledIdx: number[],
  retryAfter: string | null = '1',
  rejected: number[] = [],
): TransportResponse {
  return {
    status: 429,
    retryAfter,
    body: {
      accepted: n - throttledIdx.length - rejected.length,
      rejected: rejected.map((index) => ({ index, reason: 'name_invalid' })),
      throttled: throttledIdx,
      error: 'queue_full',
    },
  };
}

/** A 429 throttling every event of the request. */
export function throttleAll(retryAfter: string | null = '1'): (req: TransportRequest) => Answer {
  return (req) =>
    throttled(
      req.events.length,
      req.events.map((_, i) => i),
      retryAfter,
    );
}

export function status(code: number, retryAfter: string | null = null): TransportResponse {
  return { status: code, retryAfter, body: { error: 'x', message: 'x' } };
}

/** A `random` that replays `values` in a loop. */
export function sequence(...values: number[]): () => number {
  let i = 0;
  return () => values[i++ % values.length]!;
}
