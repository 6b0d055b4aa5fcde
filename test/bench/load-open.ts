import type { HttpClient } from './http-client';
import { LatencyRecorder } from './latency';
import { LoadTally, type LoadResult } from './load-result';
import type { RequestBody } from './workload';

export interface OpenLoopOptions {
  readonly client: HttpClient;
  readonly path: string;
  /** Sent in order, each at most once: the count bound of the run. */
  readonly bodies: readonly RequestBody[];
  /** Fixed offered rate: requests leave on this schedule whatever the answers (requests/s). */
  readonly requestsPerSecond: number;
  /** Time bound of the schedule (milliseconds). */
  readonly maxMs: number;
  /** Most requests in flight; a request due while at this bound is not sent (counted as `shed`). */
  readonly maxInFlight: number;
}

export interface OpenLoopResult extends LoadResult {
  /** Requests due that were not sent because `maxInFlight` were outstanding. */
  readonly shed: number;
  /** Offered rate actually achieved by the generator (requests/s). */
  readonly offeredPerSecond: number;
  /** Most requests outstanding at once. */
  readonly maxInFlightSeen: number;
  /** Latency from each request's scheduled time (includes generator lag; milliseconds). */
  readonly latencyFromSchedule: LatencyRecorder;
}

/**
 * An open loop: request i is due at start + i / rate, sent whether or not earlier ones were
 * answered. Latency is measured both from the moment it left and from its scheduled time.
 */
export async function runOpenLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  await o.client.connectAll();
  const tally = new LoadTally();
  const fromSchedule = new LatencyRecorder();
  const intervalMs = 1000 / o.requestsPerSecond;
  const inFlight = new Set<Promise<void>>();
  let next = 0;
  let shed = 0;
  let maxInFlightSeen = 0;
  tally.startedAt = performance.now();
  const start = tally.startedAt;

  const send = (body: RequestBody, scheduled: number): void => {
    tally.requests++;
    tally.sentEvents += body.events;
    const sent = performance.now();
    const p = o.client.post(o.path, body.bytes).then(
      (answer) => {
        const now = performance.now();
        tally.answered(answer.status, answer.accepted, now - sent);
        fromSchedule.record(now - scheduled);
      },
      (err: unknown) => tally.failed(err),
    );
    inFlight.add(p);
    maxInFlightSeen = Math.max(maxInFlightSeen, inFlight.size);
    void p.finally(() => inFlight.delete(p));
  };

  while (next < o.bodies.length) {
    const elapsed = performance.now() - start;
    if (elapsed >= o.maxMs) break;
    const due = Math.min(o.bodies.length, Math.floor(elapsed / intervalMs) + 1);
    while (next < due) {
      const body = o.bodies[next] as RequestBody;
      const scheduled = start + next * intervalMs;
      next++;
      if (inFlight.size >= o.maxInFlight) shed++;
      else send(body, scheduled);
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  const scheduleEnd = performance.now();
  await Promise.all(inFlight);
  tally.endedAt = performance.now();
  return {
    ...tally.result(),
    latency: tally.latency,
    latencyByStatus: tally.latencyByStatus,
    byStatus: tally.byStatus,
    shed,
    maxInFlightSeen,
    offeredPerSecond: (next / (scheduleEnd - start)) * 1000,
    latencyFromSchedule: fromSchedule,
  };
}
