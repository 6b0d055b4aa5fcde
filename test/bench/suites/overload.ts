import path from 'node:path';
import { freePort } from '../../../src/dev-cluster/free-port';
import { memoryFlagArgs } from '../../../src/runtime/memory-flags';
import { cleanEnv } from '../collector-process';
import type { BenchContext } from '../context';
import { createHttpClient } from '../http-client';
import { runOpenLoop, type OpenLoopResult } from '../load-open';
import { statusCount } from '../load-result';
import { MiB } from '../proc-stats';
import { startService } from '../service-process';
import { bounded, figure, round } from '../rows';
import type { BenchRow } from '../types';
import { runSluiceOpen } from './sluice-open';

const SUITE = 'overload';
const LOAD_FACTOR = 3;
/** Lane bounds of this run, small enough that the offered load fills them within the window. */
const QUEUE_CAPACITY = 10_000;
const QUEUE_MAX_BYTES = 16 * MiB;
const ERROR_QUEUE_CAPACITY = 2_000;
const ERROR_QUEUE_MAX_BYTES = 4 * MiB;
/** Target of the 429 answers' p99 (milliseconds). */
const THROTTLE_P99_TARGET_MS = 10;
const MAX_IN_FLIGHT = 256;
/**
 * The bound (docs/configuration.md, memory flags) on resident memory at 3 × saturation with the memory flags of
 * src/runtime/memory-flags.ts (MiB): the working set of full load (idle process, young generation,
 * requests in flight) plus these lanes' contents, with room for the box's noise.
 */
const RSS_BOUND_MIB = 200;

/**
 * The same open loop against `baselines/refuse-all.ts`, a bare node:http server refusing every
 * request from its request line: the 429 latency the box, this load generator and Node's HTTP
 * server give by themselves, before the collector's own work.
 */
async function runRefusalFloor(ctx: BenchContext, requestsPerSecond: number): Promise<OpenLoopResult> {
  const port = await freePort();
  const server = await startService({
    name: 'refuse-all',
    script: path.resolve(__dirname, '..', 'baselines', 'refuse-all.js'),
    nodeArgs: memoryFlagArgs(),
    env: { ...cleanEnv(), BENCH_PORT: String(port) },
    port,
  });
  const client = createHttpClient(server.origin, MAX_IN_FLIGHT);
  try {
    return await runOpenLoop({
      client,
      path: '/v1/events',
      bodies: ctx.batches.bodies,
      requestsPerSecond,
      maxMs: ctx.options.overloadMs,
      maxInFlight: MAX_IN_FLIGHT,
    });
  } finally {
    await client.close();
    await server.stop();
  }
}

/**
 * Row 8: an open loop at three times the saturation rate. The collector must shed with fast 429s,
 * keep its memory within the configured lane bounds, and store every event it acknowledged.
 */
export async function runOverload(
  ctx: BenchContext,
  saturationEventsPerSecond: number,
  saturationPeakRssMiB: number,
): Promise<BenchRow[]> {
  const perRequest = ctx.batches.perRequest;
  const requestsPerSecond = (saturationEventsPerSecond * LOAD_FACTOR) / perRequest;
  ctx.batches.ensure(Math.ceil(requestsPerSecond * (ctx.options.overloadMs / 1000) * perRequest * 1.05));
  ctx.progress(`overload at ${Math.round(requestsPerSecond)} req/s (${LOAD_FACTOR} × saturation)`);
  const r = await runSluiceOpen(ctx, {
    label: 'overload',
    bodies: ctx.batches.bodies,
    requestsPerSecond,
    maxMs: ctx.options.overloadMs,
    maxInFlight: MAX_IN_FLIGHT,
    settings: {
      laneCapacity: QUEUE_CAPACITY,
      laneMaxBytes: QUEUE_MAX_BYTES,
      errorLaneCapacity: ERROR_QUEUE_CAPACITY,
      errorLaneMaxBytes: ERROR_QUEUE_MAX_BYTES,
    },
  });
  ctx.progress(`the same load against a server refusing everything (node:http floor)`);
  const floor = await runRefusalFloor(ctx, requestsPerSecond);
  const floor429 = floor.latencyByStatus.get(429);
  const name = `${LOAD_FACTOR} × saturation`;
  const throttled = statusCount(r.load, 429);
  const answered = r.load.requests - r.load.transportErrors;
  const lat429 = r.load.latencyByStatus.get(429);
  const p99 = lat429?.p99 ?? NaN;
  const laneBoundMiB = (QUEUE_MAX_BYTES + ERROR_QUEUE_MAX_BYTES) / MiB;
  const exitOk = r.exit.code === 0;
  return [
    figure(SUITE, `${name}: share answered 429`, (throttled / Math.max(1, answered)) * 100, '%', {
      offered_req_s: round(r.load.offeredPerSecond),
      offered_events_s: Math.round(r.load.offeredPerSecond * perRequest),
      answered_202: statusCount(r.load, 202),
      answered_429: throttled,
      other: answered - throttled - statusCount(r.load, 202),
      transport_errors: r.load.transportErrors,
      shed_by_generator: r.load.shed,
      collector_cpu_ms_per_request: round((r.cpuSeconds * 1000) / Math.max(1, answered)),
    }),
    bounded(
      SUITE,
      `${name}: 429 latency p99`,
      p99,
      'ms',
      `< ${THROTTLE_P99_TARGET_MS} ms`,
      p99 < THROTTLE_P99_TARGET_MS,
      {
        p50_ms: round(lat429?.p50 ?? NaN),
        max_ms: round(lat429?.max ?? NaN),
        p99_202_ms: round(r.load.latencyByStatus.get(202)?.p99 ?? NaN),
        p99_from_schedule_ms: round(r.load.latencyFromSchedule.p99),
      },
    ),
    figure(
      SUITE,
      `${name}: 429 latency p99 of a server refusing everything (node:http floor)`,
      floor429?.p99 ?? NaN,
      'ms',
      {
        p50_ms: round(floor429?.p50 ?? NaN),
        max_ms: round(floor429?.max ?? NaN),
        answered_429: statusCount(floor, 429),
        transport_errors: floor.transportErrors,
        collector_p99_over_floor_p99: round(p99 / (floor429?.p99 ?? NaN)),
      },
    ),
    bounded(
      SUITE,
      `${name}: peak RSS`,
      r.peakRssMiB,
      'MiB',
      `≤ ${RSS_BOUND_MIB} MiB`,
      r.peakRssMiB <= RSS_BOUND_MIB,
      {
        idle_rss_MiB: round(r.idleRssMiB),
        peak_rss_at_saturation_MiB: round(saturationPeakRssMiB),
        lane_bytes_MiB: laneBoundMiB,
        max_requests_in_flight: r.load.maxInFlightSeen,
        queue_capacity: QUEUE_CAPACITY,
        error_queue_capacity: ERROR_QUEUE_CAPACITY,
      },
    ),
    bounded(
      SUITE,
      `${name}: acknowledged events stored after SIGTERM`,
      r.storedAfterExit,
      'events',
      `= acknowledged (${r.accepted})`,
      r.storedAfterExit === r.accepted && exitOk,
      { acknowledged: r.accepted, exit: r.exit.code ?? String(r.exit.signal) },
    ),
  ];
}
