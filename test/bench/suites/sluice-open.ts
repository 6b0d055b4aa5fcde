import { startCollector, type CollectorSettings } from '../collector-process';
import type { BenchContext } from '../context';
import { createHttpClient } from '../http-client';
import { runClosedLoop } from '../load-closed';
import { runOpenLoop, type OpenLoopResult } from '../load-open';
import { RowCounter } from '../pg-bench-db';
import { MiB } from '../proc-stats';
import type { ExitStatus } from '../service-process';
import type { RequestBody } from '../workload';

export interface SluiceOpenRun {
  readonly load: OpenLoopResult;
  /** Rows in the database after the collector exited on SIGTERM. */
  readonly storedAfterExit: number;
  /** Events acknowledged in the window: sum of `accepted` over 202 and 429 answers. */
  readonly accepted: number;
  /** Collector RSS after the warm-up, before the window (MiB). */
  readonly idleRssMiB: number;
  /** Collector `VmHWM` after the window, before SIGTERM (MiB). */
  readonly peakRssMiB: number;
  /** Collector CPU seconds in the window. */
  readonly cpuSeconds: number;
  readonly exit: ExitStatus;
}

export interface SluiceOpenOptions {
  readonly label: string;
  readonly bodies: readonly RequestBody[];
  /** Offered rate (requests/s). */
  readonly requestsPerSecond: number;
  readonly maxMs: number;
  /** Bound of requests in flight (and of client connections). */
  readonly maxInFlight: number;
  readonly settings?: Partial<CollectorSettings>;
}

const WARMUP_REQUESTS = 100;

/**
 * One collector (ack=queued) on a fresh database: warm up, an open loop at a fixed rate, then
 * SIGTERM (the collector flushes its lanes and exits) and a count of the rows it left.
 */
export async function runSluiceOpen(ctx: BenchContext, o: SluiceOpenOptions): Promise<SluiceOpenRun> {
  const db = await ctx.databases.fresh(o.label);
  const collector = await startCollector({ databaseUrl: db.url, ack: 'queued', ...o.settings });
  const counter = new RowCounter(db.url);
  try {
    const warmClient = createHttpClient(collector.origin, 8);
    const warm = await runClosedLoop({
      client: warmClient,
      path: '/v1/events',
      bodies: ctx.warmup.bodies.slice(0, WARMUP_REQUESTS),
      concurrency: 8,
      maxMs: 1500,
    });
    await warmClient.close();
    await counter.waitFor(warm.accepted, ctx.options.storeTimeoutMs);
    const before = await counter.count();
    const idle = collector.sample();

    const client = createHttpClient(collector.origin, o.maxInFlight);
    const load = await runOpenLoop({
      client,
      path: '/v1/events',
      bodies: o.bodies,
      requestsPerSecond: o.requestsPerSecond,
      maxMs: o.maxMs,
      maxInFlight: o.maxInFlight,
    });
    const end = collector.sample();
    await client.close();
    const exit = await collector.stop(ctx.options.storeTimeoutMs);
    const storedAfterExit = (await counter.count()) - before;
    return {
      load,
      storedAfterExit,
      accepted: load.accepted,
      idleRssMiB: idle.rssBytes / MiB,
      peakRssMiB: end.peakRssBytes / MiB,
      cpuSeconds: end.cpuSeconds - idle.cpuSeconds,
      exit,
    };
  } finally {
    await counter.close();
    await collector.stop();
    await ctx.databases.drop(db);
  }
}
