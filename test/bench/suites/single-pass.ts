import type { EventLimits } from '../../../src/events/limits';
import { RequestScan } from '../../../src/events/scan/scan-request';
import { validateEvent } from '../../../src/events/validate';
import { eventLimits } from '../../../src/compose/storage';
import { loadConfig } from '../../../src/config/load';
import { toCopyLine } from '../../../src/storage/postgres/copy-encoding';
import { copyLineFromScan } from '../../../src/storage/postgres/copy-line-from-scan';
import type { BenchContext } from '../context';
import { bounded, figure, round } from '../rows';
import type { BenchRow } from '../types';
import type { RequestBody } from '../workload';

const SUITE = 'single-pass';
const LIMITS: EventLimits = eventLimits(loadConfig({}));
const MAX_EVENTS = 1000;
const ROUNDS = 5;

/** Today's typed path in process: `JSON.parse`, `validateEvent`, `toCopyLine`. Answers the events written. */
function typedPath(bodies: readonly RequestBody[], now: number): number {
  let n = 0;
  for (const b of bodies) {
    const events = (JSON.parse(b.bytes.toString('utf8')) as { events: unknown[] }).events;
    for (const raw of events) {
      const v = validateEvent(raw, LIMITS, now);
      if (v.ok && toCopyLine(v.event).bytes.length > 0) n++;
    }
  }
  return n;
}

export interface PassCount {
  fast: number;
  slow: number;
  fallbackRequests: number;
}

/** The single pass in process: scan, the COPY line, the id and app strings intake makes. */
export function singlePass(bodies: readonly RequestBody[], now: number, count: PassCount): void {
  for (const b of bodies) {
    const scan = RequestScan.open(b.bytes, LIMITS, now, MAX_EVENTS, () => undefined);
    if (scan === null) {
      count.fallbackRequests++;
      continue;
    }
    const step = scan.step(Number.MAX_SAFE_INTEGER, {
      fast(f) {
        count.fast++;
        copyLineFromScan(b.bytes, f);
        scan.idOf(f);
        scan.textOf(f.app, true);
      },
      slow(raw) {
        count.slow++;
        const v = validateEvent(raw, LIMITS, now);
        if (v.ok) toCopyLine(v.event);
      },
    });
    if (step === 'fallback') count.fallbackRequests++;
  }
}

/**
 * The single pass against the typed path on the bench's realistic bodies, in this process: CPU per
 * event of each (alternating rounds, the median kept) and the share of events the single pass
 * leaves to the typed path (its fallback rate; target 0 %).
 */
export async function runSinglePass(ctx: BenchContext): Promise<BenchRow[]> {
  const bodies = ctx.batches.bodies.slice(0, ctx.options.quick ? 200 : 1000);
  const events = bodies.reduce((n, b) => n + b.events, 0);
  const now = Date.now();
  const typed: number[] = [];
  const single: number[] = [];
  let count: PassCount = { fast: 0, slow: 0, fallbackRequests: 0 };
  for (let r = 0; r < ROUNDS; r++) {
    ctx.progress(`single pass: round ${r + 1} of ${ROUNDS}`);
    let t = performance.now();
    typedPath(bodies, now);
    typed.push(((performance.now() - t) * 1000) / events);
    count = { fast: 0, slow: 0, fallbackRequests: 0 };
    t = performance.now();
    singlePass(bodies, now, count);
    single.push(((performance.now() - t) * 1000) / events);
    await new Promise((resolve) => setImmediate(resolve));
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const typedUs = median(typed);
  const singleUs = median(single);
  const fallbackShare = (count.slow + count.fallbackRequests * 100) / events;
  return [
    figure(SUITE, 'typed path in process (JSON.parse, validate, COPY line)', round(typedUs), 'µs/event'),
    {
      ...figure(SUITE, 'single pass in process (scan, COPY line)', round(singleUs), 'µs/event'),
      baseline: 'typed path in process (JSON.parse, validate, COPY line)',
      ratio: round(singleUs / typedUs),
    },
    bounded(
      SUITE,
      'single-pass fallback rate on the realistic bodies',
      round(fallbackShare * 100),
      '%',
      '0 %',
      fallbackShare === 0,
      { events, slowEvents: count.slow, fallbackRequests: count.fallbackRequests },
    ),
  ];
}
