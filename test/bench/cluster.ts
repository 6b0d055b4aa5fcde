/**
 * Tier 3 on one box: one collector direct vs three collectors behind a real HAProxy
 * (`startLocalCluster`, the topology of `sluice cluster`), same load: batches of 100 events, a
 * closed loop bounded in count and time. Two cores do not scale three collectors linearly; the
 * figures say what HAProxy and the extra processes cost, per event.
 */
import { startLocalCluster, type LocalCluster } from '../../src/dev-cluster';
import { readBenchOptions, type BenchOptions } from './bench-options';
import { cleanEnv, startCollector } from './collector-process';
import { createHttpClient } from './http-client';
import { runClosedLoop } from './load-closed';
import { ratePerSecond, type LoadResult } from './load-result';
import { BenchDatabases, RowCounter } from './pg-bench-db';
import { sampleProcess } from './proc-stats';
import { figure, round, versus } from './rows';
import type { BenchRow } from './types';
import { BodyCorpus, EventGenerator, type RequestBody } from './workload';

const SUITE = 'cluster';
/** Requests in flight, the same against one collector and against HAProxy. */
const CONCURRENCY = 16;
const EVENTS_PER_REQUEST = 100;
/** Measured window of each run (milliseconds); at most 20 s, as the bench promises. */
const WINDOW_MS = 12_000;
const QUICK_WINDOW_MS = 2_000;
/** Bodies built ahead: the count bound of each run (a run ends early if it sends them all). */
const CORPUS_EVENTS = 900_000;
const QUICK_CORPUS_EVENTS = 80_000;
const WARMUP_REQUESTS = 150;
const WARMUP_MS = 1500;
/** Collector settings of both runs: throughput, not limits (one bench app would hit 100 events/s). */
const COLLECTOR_ENV = { SLUICE_RATE_LIMIT: '0', SLUICE_LOG_LEVEL: 'warn' } as const;

interface MeasuredRun {
  readonly load: LoadResult;
  readonly eventsPerSecond: number;
  readonly allStored: boolean;
  /** CPU seconds (user + system) of each collector over the window and until stored. */
  readonly collectorCpu: readonly number[];
  /** Events each collector acknowledged in the window (its own counter; the client's count when alone). */
  readonly collectorEvents: readonly number[];
  readonly haproxyCpu: number | null;
}

function progress(message: string): void {
  process.stderr.write(`[bench cluster] ${message}\n`);
}

/** Warm-up, then the measured closed loop, then the wait until PostgreSQL holds every acknowledged event. */
async function measure(
  options: BenchOptions,
  origin: string,
  databaseUrl: string,
  bodies: readonly RequestBody[],
  warmup: readonly RequestBody[],
  windowMs: number,
  pids: { collectors: readonly number[]; haproxy: number | null },
  perCollectorEvents: (() => Promise<number[]>) | null,
): Promise<MeasuredRun> {
  const client = createHttpClient(origin, CONCURRENCY);
  const counter = new RowCounter(databaseUrl);
  try {
    const warm = await runClosedLoop({
      client,
      path: '/v1/events',
      bodies: warmup,
      concurrency: CONCURRENCY,
      maxMs: WARMUP_MS,
    });
    const before = (await counter.waitFor(warm.accepted, options.storeTimeoutMs)).rows;
    const eventsBefore = perCollectorEvents ? await perCollectorEvents() : null;
    const cpu = (): { collectors: number[]; haproxy: number | null } => ({
      collectors: pids.collectors.map((pid) => sampleProcess(pid).cpuSeconds),
      haproxy: pids.haproxy === null ? null : sampleProcess(pids.haproxy).cpuSeconds,
    });
    const cpu0 = cpu();
    const load = await runClosedLoop({
      client,
      path: '/v1/events',
      bodies,
      concurrency: CONCURRENCY,
      maxMs: windowMs,
    });
    const reached = await counter.waitFor(before + load.accepted, options.storeTimeoutMs);
    const cpu1 = cpu();
    const eventsAfter = perCollectorEvents ? await perCollectorEvents() : null;
    return {
      load,
      eventsPerSecond: ratePerSecond(load, load.accepted),
      allStored: reached.at !== null,
      collectorCpu: cpu1.collectors.map((c, i) => c - (cpu0.collectors[i] ?? 0)),
      collectorEvents:
        eventsBefore && eventsAfter ? eventsAfter.map((n, i) => n - (eventsBefore[i] ?? 0)) : [load.accepted],
      haproxyCpu: cpu1.haproxy === null || cpu0.haproxy === null ? null : cpu1.haproxy - cpu0.haproxy,
    };
  } finally {
    await client.close();
    await counter.close();
  }
}

function perMillion(cpuSeconds: number, events: number): number {
  return events > 0 ? (cpuSeconds / events) * 1e6 : NaN;
}

function sum(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}

function latencyExtra(r: MeasuredRun): Record<string, number | string> {
  const ok = r.load.latencyByStatus.get(202);
  const failed = r.load.requests - (r.load.byStatus[202] ?? 0);
  return {
    concurrency: CONCURRENCY,
    p50_ms: round(ok?.p50 ?? NaN),
    p99_ms: round(ok?.p99 ?? NaN),
    requests_not_202: failed,
    by_status: Object.entries(r.load.byStatus)
      .map(([status, n]) => `${status}:${n}`)
      .join(' '),
    transport_errors: r.load.transportErrors,
    all_stored: r.allStored ? 'yes' : 'NO',
  };
}

/** Rows of the cluster suite; the bench harness (run.ts) calls this. */
export async function runClusterBench(): Promise<BenchRow[]> {
  const options = readBenchOptions();
  const windowMs = options.quick ? QUICK_WINDOW_MS : WINDOW_MS;
  const databases = new BenchDatabases(options.adminUrl);
  progress('building request bodies');
  const bodies = new BodyCorpus(new EventGenerator(31), EVENTS_PER_REQUEST).ensure(
    options.quick ? QUICK_CORPUS_EVENTS : CORPUS_EVENTS,
  ).bodies;
  const warmup = new BodyCorpus(new EventGenerator(32), EVENTS_PER_REQUEST).ensure(
    WARMUP_REQUESTS * EVENTS_PER_REQUEST,
  ).bodies;
  let cluster: LocalCluster | null = null;
  try {
    progress(`one collector direct, concurrency ${CONCURRENCY}, ${windowMs} ms`);
    const directDb = await databases.fresh('cluster_direct');
    const single = await startCollector({
      databaseUrl: directDb.url,
      ack: 'queued',
      extraEnv: COLLECTOR_ENV,
    });
    let direct: MeasuredRun;
    try {
      direct = await measure(
        options,
        single.origin,
        directDb.url,
        bodies,
        warmup,
        windowMs,
        { collectors: [single.pid], haproxy: null },
        null,
      );
    } finally {
      await single.stop();
      await databases.drop(directDb);
    }

    progress(`three collectors behind HAProxy, concurrency ${CONCURRENCY}, ${windowMs} ms`);
    const clusterDb = await databases.fresh('cluster_haproxy');
    cluster = await startLocalCluster({
      collectors: 3,
      port: 0,
      statsPort: 0,
      databaseUrl: clusterDb.url,
      redisUrl: null,
      env: cleanEnv(),
      collectorEnv: { ...COLLECTOR_ENV, SLUICE_ACK: 'queued' },
    });
    const lb = cluster;
    const pids = lb.collectors.map((c) => c.pid).filter((p): p is number => p !== undefined);
    // Each collector's own count of events it acknowledged (sluice_events_accepted_total, all labels).
    const perCollector = (): Promise<number[]> =>
      Promise.all(
        lb.collectors.map(async (c) => {
          const text = await (await fetch(`${c.url}/metrics`)).text();
          return text
            .split('\n')
            .filter((l) => l.startsWith('sluice_events_accepted_total{'))
            .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
        }),
      );
    const behind = await measure(
      options,
      lb.url,
      clusterDb.url,
      bodies,
      warmup,
      windowMs,
      { collectors: pids, haproxy: lb.haproxy.pid ?? null },
      perCollector,
    );
    await lb.stop();
    cluster = null;

    const directCpuPerM = perMillion(direct.collectorCpu[0] ?? NaN, direct.load.accepted);
    const perCollectorCpuPerM = behind.collectorCpu.map((cpu, i) =>
      perMillion(cpu, behind.collectorEvents[i] ?? 0),
    );
    const meanCollectorCpuPerM = sum(perCollectorCpuPerM) / perCollectorCpuPerM.length;
    const haproxyCpuPerM = perMillion(behind.haproxyCpu ?? NaN, behind.load.accepted);

    const directRow = figure(SUITE, '1 collector direct', direct.eventsPerSecond, 'events/s', {
      ...latencyExtra(direct),
      cpu_s_per_M_events: round(directCpuPerM),
      cpu_s_per_M_events_sent: round(perMillion(direct.collectorCpu[0] ?? NaN, direct.load.sentEvents)),
    });
    const clusterExtra: Record<string, number | string> = {
      ...latencyExtra(behind),
      cpu_s_per_M_events_per_collector: round(meanCollectorCpuPerM),
      haproxy_cpu_s_per_M_events: round(haproxyCpuPerM),
      cpu_s_per_M_events_sent: round(perMillion(sum(behind.collectorCpu), behind.load.sentEvents)),
      total_cpu_s_per_M_events: round(
        perMillion(sum(behind.collectorCpu) + (behind.haproxyCpu ?? 0), behind.load.accepted),
      ),
    };
    lb.collectors.forEach((c, i) => {
      clusterExtra[`${c.name}_share`] =
        `${round(((behind.collectorEvents[i] ?? 0) / Math.max(1, behind.load.accepted)) * 100)}%`;
      clusterExtra[`${c.name}_cpu_s_per_M_events`] = round(perCollectorCpuPerM[i] ?? NaN);
    });
    return [
      directRow,
      versus(
        SUITE,
        '3 collectors behind HAProxy',
        behind.eventsPerSecond,
        'events/s',
        directRow,
        undefined,
        clusterExtra,
      ),
      figure(
        SUITE,
        'HAProxy overhead: its CPU ÷ the collectors’ CPU, same run',
        (behind.haproxyCpu ?? NaN) / sum(behind.collectorCpu),
        'ratio',
        {
          haproxy_cpu_s_per_M_events: round(haproxyCpuPerM),
          collectors_cpu_s_per_M_events: round(perMillion(sum(behind.collectorCpu), behind.load.accepted)),
          vs_one_collector_direct: round(haproxyCpuPerM / directCpuPerM),
        },
      ),
      figure(
        SUITE,
        'collector CPU per event behind HAProxy ÷ direct',
        meanCollectorCpuPerM / directCpuPerM,
        'ratio',
        {
          note:
            'per acknowledged event: a request answered 429 still costs its parse and validation, so the ' +
            'collector that throttles more (one alone, its lane full) pays more per acknowledged event',
        },
      ),
    ];
  } finally {
    if (cluster) await cluster.stop().catch(() => undefined);
    await databases.dropAll();
  }
}
