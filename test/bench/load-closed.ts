import type { HttpClient } from './http-client';
import { LoadTally, type LoadResult } from './load-result';
import type { RequestBody } from './workload';

export interface ClosedLoopOptions {
  readonly client: HttpClient;
  readonly path: string;
  /** Sent in order, each at most once (the count bound of the run) unless `maxRequests` is set. */
  readonly bodies: readonly RequestBody[];
  /**
   * Count bound when bodies may be sent again, cycling through them: only for servers that store
   * nothing (the null handler), where ids need not be unique.
   */
  readonly maxRequests?: number;
  /**
   * Makes the bodies new points each time round, for a window longer than the bodies last: called
   * before request `i` sends body `i % bodies.length`, with cycle = ⌊i / bodies.length⌋, to rewrite
   * the body's ids or timestamps in place for that cycle (a no-op when it already holds them). With
   * it, only `maxMs` bounds the run. Requests are numbered from `firstRequest`, so a window can
   * continue where its warm-up stopped.
   */
  readonly recycle?: (body: RequestBody, cycle: number) => void;
  /** Number of the first request (see `recycle`). Default 0. */
  readonly firstRequest?: number;
  /** Requests in flight at any time: each worker sends its next request when the last is answered. */
  readonly concurrency: number;
  /** Time bound of the run (milliseconds): no request leaves after it. */
  readonly maxMs: number;
  /**
   * After a 429 the worker waits this long (milliseconds) before its next request, as a client
   * honouring backpressure would; without it, the workers spin on cheap 429s. Default 10.
   */
  readonly throttledPauseMs?: number;
}

/** A closed loop: `concurrency` workers, each one request at a time, until bodies or time run out. */
export async function runClosedLoop(o: ClosedLoopOptions): Promise<LoadResult> {
  await o.client.connectAll();
  const tally = new LoadTally();
  const pause = o.throttledPauseMs ?? 10;
  const first = o.firstRequest ?? 0;
  const limit = first + (o.maxRequests ?? (o.recycle ? Infinity : o.bodies.length));
  let next = first;
  tally.startedAt = performance.now();
  const deadline = tally.startedAt + o.maxMs;

  const worker = async (): Promise<void> => {
    while (next < limit && performance.now() < deadline) {
      const i = next++;
      const body = o.bodies[i % o.bodies.length] as RequestBody;
      o.recycle?.(body, Math.floor(i / o.bodies.length));
      tally.requests++;
      tally.sentEvents += body.events;
      const sent = performance.now();
      try {
        const answer = await o.client.post(o.path, body.bytes);
        tally.answered(answer.status, answer.accepted, performance.now() - sent);
        if (answer.status === 429 && pause > 0) await new Promise((r) => setTimeout(r, pause));
      } catch (err) {
        tally.failed(err);
      }
    }
  };
  await Promise.all(Array.from({ length: o.concurrency }, worker));
  tally.endedAt = performance.now();
  tally.nextRequest = next;
  return tally.result();
}
