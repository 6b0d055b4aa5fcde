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
  const limit = o.maxRequests ?? o.bodies.length;
  let next = 0;
  tally.startedAt = performance.now();
  const deadline = tally.startedAt + o.maxMs;

  const worker = async (): Promise<void> => {
    while (next < limit && performance.now() < deadline) {
      const body = o.bodies[next++ % o.bodies.length] as RequestBody;
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
  return tally.result();
}
