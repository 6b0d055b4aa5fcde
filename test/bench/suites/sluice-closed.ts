import { startCollector, type CollectorSettings } from '../collector-process';
import { writerFigures, type WriterFigures } from '../collector-metrics';
import type { BenchContext } from '../context';
import { createHttpClient } from '../http-client';
import { runClosedLoop } from '../load-closed';
import { ratePerSecond, statusCount, type LoadResult } from '../load-result';
import { PgBackendCpu } from '../pg-backend-cpu';
import { RowCounter } from '../pg-bench-db';
import { MiB } from '../proc-stats';
import type { ExitStatus, ServiceProcess } from '../service-process';
import type { RequestBody } from '../workload';

export interface SluiceClosedRun {
  readonly ack: 'queued' | 'stored';
  readonly concurrency: number;
  readonly load: LoadResult;
  /** Events acknowledged in the window (sum of `accepted`). */
  readonly accepted: number;
  /** Rows the window added to the database. */
  readonly stored: number;
  /** Whether the database reached every acknowledged event within the timeout. */
  readonly allStored: boolean;
  /** Stored events ÷ time from the first request until the count was reached. */
  readonly storedPerSecond: number;
  /** 202 answers per second of the window (client side). */
  readonly answeredPerSecond: number;
  /** Collector CPU seconds (user + system) per million stored events, window and drain. */
  readonly cpuSecondsPerMillion: number;
  /** The database's backends' CPU seconds per million stored events, window and drain (NaN unless asked). */
  readonly pgCpuSecondsPerMillion: number;
  /** Collector `VmHWM` at the end (MiB). */
  readonly peakRssMiB: number;
  /** Share of requests answered 429. */
  readonly throttledShare: number;
  /** The writer loop's flushes over the whole process life (warm-up included). */
  readonly writer: WriterFigures | null;
  readonly exit: ExitStatus;
}

export interface SluiceClosedOptions {
  readonly ack: 'queued' | 'stored';
  readonly concurrency: number;
  readonly bodies: readonly RequestBody[];
  readonly settings?: Partial<CollectorSettings>;
  readonly label: string;
  /** Whether to read the PostgreSQL backends' CPU too (`pgCpuSecondsPerMillion`). */
  readonly pgCpu?: boolean;
  /**
   * Bodies of the warm-up before the window (sent once each, within `warmupMs`): default the
   * context's first 150. A suite comparing small differences gives more, so the JIT has settled
   * (tiered up the code both variants run) before the clock starts.
   */
  readonly warmup?: readonly RequestBody[];
  /** Longest warm-up (milliseconds). Default 1,500. */
  readonly warmupMs?: number;
  /** The server measured, on the run's fresh database: default a collector (`settings` apply to it only). */
  readonly start?: (databaseUrl: string) => Promise<ServiceProcess>;
}

/** Requests of the warm-up before each measured window (JIT, connection pools). */
const WARMUP_REQUESTS = 150;
const WARMUP_MS = 1500;

/**
 * One collector process (or `start`'s server) on a fresh database: warm up, then a closed loop
 * over `bodies`, then wait until the database holds every event the window acknowledged. The
 * process is stopped with SIGTERM at the end and its exit status kept.
 */
export async function runSluiceClosed(ctx: BenchContext, o: SluiceClosedOptions): Promise<SluiceClosedRun> {
  const db = await ctx.databases.fresh(o.label);
  const collector = await (o.start?.(db.url) ??
    startCollector({ databaseUrl: db.url, ack: o.ack, ...o.settings }));
  const counter = new RowCounter(db.url);
  const backends = o.pgCpu === true ? new PgBackendCpu(db.url) : null;
  let backendsStopped = false;
  try {
    const client = createHttpClient(collector.origin, o.concurrency);
    const warm = await runClosedLoop({
      client,
      path: '/v1/events',
      bodies: o.warmup ?? ctx.warmup.bodies.slice(0, WARMUP_REQUESTS),
      concurrency: o.concurrency,
      maxMs: o.warmupMs ?? WARMUP_MS,
    });
    const before = (await counter.waitFor(warm.accepted, ctx.options.storeTimeoutMs)).rows;

    await backends?.start();
    const cpu0 = collector.sample().cpuSeconds;
    const load = await runClosedLoop({
      client,
      path: '/v1/events',
      bodies: o.bodies,
      concurrency: o.concurrency,
      maxMs: ctx.options.closedMs,
    });
    const reached = await counter.waitFor(before + load.accepted, ctx.options.storeTimeoutMs);
    const end = collector.sample();
    backendsStopped = true;
    const pgCpu = (await backends?.stop()) ?? NaN;
    await client.close();
    const writer = await writerFigures(collector.origin);
    const stored = reached.rows - before;
    const storedAt = reached.at ?? performance.now();
    const storedSeconds = (storedAt - load.startedAt) / 1000;
    return {
      ack: o.ack,
      concurrency: o.concurrency,
      load,
      accepted: load.accepted,
      stored,
      allStored: reached.at !== null,
      storedPerSecond: stored / storedSeconds,
      answeredPerSecond: ratePerSecond(load, statusCount(load, 202)),
      cpuSecondsPerMillion: stored > 0 ? ((end.cpuSeconds - cpu0) / stored) * 1e6 : NaN,
      pgCpuSecondsPerMillion: stored > 0 ? (pgCpu / stored) * 1e6 : NaN,
      peakRssMiB: end.peakRssBytes / MiB,
      throttledShare: load.requests > 0 ? statusCount(load, 429) / load.requests : 0,
      writer,
      exit: await collector.stop(),
    };
  } finally {
    if (!backendsStopped) await backends?.stop().catch(() => undefined);
    await counter.close();
    await collector.stop();
    await ctx.databases.drop(db);
  }
}
