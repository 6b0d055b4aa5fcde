/**
 * The closed loop the queue suite drives a collector with, and the figures it keeps of it: what
 * the collector accepted, its CPU per accepted event, and the CPU of other processes in the same
 * window (the NATS servers behind an ingest collector).
 */
import { createHttpClient } from './http-client';
import { runClosedLoop } from './load-closed';
import { ratePerSecond, statusCount, type LoadResult } from './load-result';
import { round } from './rows';
import type { ServiceProcess } from './service-process';
import { median } from './suites/limits';
import type { BodyCorpus } from './workload';

/** Requests in flight in every closed loop of the suite. */
export const CONCURRENCY = 16;
/** Requests sent before each measured window, not measured. */
export const WARMUP_REQUESTS = 100;

export interface Intake {
  readonly load: LoadResult;
  readonly acceptedPerSecond: number;
  readonly acceptedTotal: number;
  /** The collector's CPU per event it accepted in the measured window (microseconds). */
  readonly cpuMicrosPerEvent: number;
  /** CPU of each of `others` per accepted event in the same window (microseconds); empty without `others`. */
  readonly othersCpuMicrosPerEvent: readonly number[];
}

/**
 * Warm-up (not measured), then a closed loop over `bodies` for `ms`; returns what the server
 * accepted. `others` reads the CPU seconds of further processes (e.g. the NATS servers), one each.
 */
export async function closedLoop(
  collector: ServiceProcess,
  warmup: BodyCorpus,
  bodies: BodyCorpus,
  ms: number,
  others?: () => readonly number[],
): Promise<Intake> {
  const client = createHttpClient(collector.origin, CONCURRENCY);
  try {
    const warm = await runClosedLoop({
      client,
      path: '/v1/events',
      bodies: warmup.bodies.slice(0, WARMUP_REQUESTS),
      concurrency: CONCURRENCY,
      maxMs: 1500,
    });
    const cpuBefore = collector.sample().cpuSeconds;
    const othersBefore = others?.() ?? [];
    const load = await runClosedLoop({
      client,
      path: '/v1/events',
      bodies: bodies.bodies,
      concurrency: CONCURRENCY,
      maxMs: ms,
    });
    const accepted = Math.max(1, load.accepted);
    return {
      load,
      acceptedPerSecond: ratePerSecond(load, load.accepted),
      acceptedTotal: warm.accepted + load.accepted,
      cpuMicrosPerEvent: ((collector.sample().cpuSeconds - cpuBefore) * 1e6) / accepted,
      othersCpuMicrosPerEvent: (others?.() ?? []).map(
        (cpu, i) => ((cpu - (othersBefore[i] ?? NaN)) * 1e6) / accepted,
      ),
    };
  } finally {
    await client.close();
  }
}

/** Latency and answers of one side over the rounds: medians, and every round's 429 share. */
export function intakeExtra<R>(runs: readonly R[], side: (r: R) => Intake): Record<string, number | string> {
  const loads = runs.map(side);
  const ok = loads.map((r) => r.load.latencyByStatus.get(202));
  return {
    concurrency: CONCURRENCY,
    cpu_us_per_event: round(median(loads.map((r) => r.cpuMicrosPerEvent))),
    p50_ms: round(median(ok.map((l) => l?.p50 ?? NaN))),
    p99_ms: round(median(ok.map((l) => l?.p99 ?? NaN))),
    answered_429: loads
      .map((r) => `${round((statusCount(r.load, 429) / Math.max(1, r.load.requests)) * 100)}%`)
      .join('/'),
    not_2xx_4xx: loads.reduce(
      (sum, r) => sum + r.load.requests - statusCount(r.load, 202) - statusCount(r.load, 429),
      0,
    ),
  };
}
