import type { ServiceProcess } from './service-process';
import type { BenchContext } from './context';
import { createHttpClient, type HttpClient } from './http-client';
import { runClosedLoop } from './load-closed';
import { RowCounter } from './pg-bench-db';
import type { RequestBody } from './workload';

/** One wire format's run: a closed loop of its bodies against a collector, then what was stored. */
export interface FormatRun {
  readonly storedPerSecond: number;
  readonly cpuMicrosPerEvent: number;
  readonly bytesPerEvent: number;
  readonly p99Ms: number;
}

export interface FormatTarget {
  readonly collector: ServiceProcess;
  /** The collector's database, whose rows are counted. */
  readonly databaseUrl: string;
  /** Where the bodies go (`http://127.0.0.1:<port>`) and as what. */
  readonly origin: string;
  readonly path: string;
  readonly contentType: string;
  /** The front answers 200 with no count (OTLP, Sentry): a 200 took every event of the body. */
  readonly countsFromBodies: boolean;
}

/**
 * Warms the collector up with `warmup`, then loads it with `bodies` for the bench's closed-loop
 * window and waits for what it accepted to be stored: events/s stored, collector CPU per stored
 * event, body bytes per event and p99 latency. Stops nothing: the caller owns the collector.
 */
export async function runFormat(
  ctx: BenchContext,
  target: FormatTarget,
  concurrency: number,
  bodies: readonly RequestBody[],
  warmup: readonly RequestBody[],
): Promise<FormatRun> {
  const counter = new RowCounter(target.databaseUrl);
  const raw = createHttpClient(target.origin, concurrency, target.contentType);
  try {
    const client = target.countsFromBodies ? countingClient(raw, [...bodies, ...warmup]) : raw;
    const loop = (load: readonly RequestBody[], maxMs: number) =>
      runClosedLoop({ client, path: target.path, bodies: load, concurrency, maxMs });
    const warm = await loop(warmup, 1500);
    const before = (await counter.waitFor(warm.accepted, ctx.options.storeTimeoutMs)).rows;
    const cpu0 = target.collector.sample().cpuSeconds;
    const load = await loop(bodies, ctx.options.closedMs);
    const reached = await counter.waitFor(before + load.accepted, ctx.options.storeTimeoutMs);
    const cpu = target.collector.sample().cpuSeconds - cpu0;
    const stored = reached.rows - before;
    const seconds = ((reached.at ?? performance.now()) - load.startedAt) / 1000;
    const sentBytes = bodies.slice(0, load.requests).reduce((n, b) => n + b.bytes.length, 0);
    return {
      storedPerSecond: stored / seconds,
      cpuMicrosPerEvent: stored > 0 ? (cpu / stored) * 1e6 : NaN,
      bytesPerEvent: load.sentEvents > 0 ? sentBytes / load.sentEvents : NaN,
      p99Ms: load.latency.p99,
    };
  } finally {
    await raw.close();
    await counter.close();
  }
}

/** Counts a 200 as every event of its body taken. */
function countingClient(client: HttpClient, bodies: readonly RequestBody[]): HttpClient {
  const events = new Map(bodies.map((b) => [b.bytes, b.events]));
  return {
    ...client,
    post: async (path, body) => {
      const answer = await client.post(path, body);
      return answer.status === 200 ? { status: 200, accepted: events.get(body) ?? 0 } : answer;
    },
  };
}
