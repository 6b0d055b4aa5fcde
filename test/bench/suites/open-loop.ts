import type { BenchContext } from '../context';
import { statusCount } from '../load-result';
import { bounded, figure, round } from '../rows';
import type { BenchRow } from '../types';
import { runSluiceOpen } from './sluice-open';

const SUITE = 'open-loop';
/** Share of the saturation rate offered. */
const LOAD_FACTOR = 0.5;

/** Row 7: a fixed rate below saturation: latency, and every acknowledged event stored. */
export async function runOpenLoopSuite(
  ctx: BenchContext,
  saturationEventsPerSecond: number,
): Promise<BenchRow[]> {
  const perRequest = ctx.batches.perRequest;
  const requestsPerSecond = (saturationEventsPerSecond * LOAD_FACTOR) / perRequest;
  ctx.batches.ensure(Math.ceil(requestsPerSecond * (ctx.options.openMs / 1000) * perRequest * 1.1));
  ctx.progress(`open loop at ${Math.round(requestsPerSecond)} req/s (${LOAD_FACTOR} × saturation)`);
  const r = await runSluiceOpen(ctx, {
    label: 'open_loop',
    bodies: ctx.batches.bodies,
    requestsPerSecond,
    maxMs: ctx.options.openMs,
    maxInFlight: 64,
  });
  const ok = r.load.latencyByStatus.get(202);
  const name = `open loop at ${LOAD_FACTOR} × saturation`;
  const allStored = r.storedAfterExit === r.accepted && r.exit.code === 0;
  return [
    figure(SUITE, `${name}: p99 latency`, ok?.p99 ?? NaN, 'ms', {
      p50_ms: round(ok?.p50 ?? NaN),
      p99_from_schedule_ms: round(r.load.latencyFromSchedule.p99),
      offered_req_s: round(r.load.offeredPerSecond),
      events_s: Math.round(saturationEventsPerSecond * LOAD_FACTOR),
      answered_429: statusCount(r.load, 429),
      shed_by_generator: r.load.shed,
      cpu_s_per_M_events: round((r.cpuSeconds / Math.max(1, r.accepted)) * 1e6),
    }),
    bounded(
      SUITE,
      `${name}: acknowledged events stored`,
      r.storedAfterExit,
      'events',
      'all 202-acknowledged stored',
      allStored,
      {
        acknowledged: r.accepted,
        exit: r.exit.code ?? String(r.exit.signal),
      },
    ),
  ];
}
