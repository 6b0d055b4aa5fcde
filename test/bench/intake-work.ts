/**
 * The intake's own work per event, in process: a request of already valid events (the typed path
 * the OTLP and Sentry fronts take, so no validation and no scan) through the lanes, the limiter,
 * the sampling advice, Prometheus counts, app activity and the loss map's tally, nothing else.
 * Each configuration adds one part to the one before, so the differences are what each part costs.
 */
import { createIntakeMetrics } from '../../src/metrics/intake-instruments';
import { createMetrics } from '../../src/metrics/instruments';
import { AppActivity } from '../../src/metrics/app-activity';
import { AppBound } from '../../src/intake/app-bound';
import { IntakeService, type IntakeServiceOptions } from '../../src/intake/intake-service';
import { SamplingAdvisor } from '../../src/intake/sampling-advice';
import type { EventLimits } from '../../src/events/limits';
import type { TelemetryEvent } from '../../src/events/types';
import { validateEvent } from '../../src/events/validate';
import { OutcomeTally } from '../../src/loss-map/outcome-tally';
import { DrainRate } from '../../src/writer/drain-rate';
import { BoundedLane } from '../../src/lanes/lane';
import { LaneSink } from '../../src/lanes/lane-sink';
import { RateLimits } from '../../src/ratelimit/event-rate-limiter';
import { MemoryRateLimiter } from '../../src/ratelimit/memory-rate-limiter';
import type { StorageRow } from '../../src/storage/port';
import { EventGenerator } from './workload';

const LIMITS: EventLimits = {
  maxAttributes: 64,
  maxAttributeKeyLength: 64,
  maxStringLength: 8192,
  maxStackLength: 65_536,
  maxNameLength: 128,
  maxSourceLength: 128,
  maxAgeMs: 7 * 86_400_000,
  maxFutureMs: 300_000,
};

/** The parts of intake, each configuration one more than the one before. */
export const INTAKE_PARTS = ['lanes', 'limiter', 'advice', 'activity', 'loss map'] as const;
export type IntakePart = (typeof INTAKE_PARTS)[number];

/** Microseconds of intake work per event, per configuration (lanes alone, then each part added). */
export type IntakeWork = Readonly<Record<IntakePart, number>>;

/** `requests` of `perRequest` valid events, from the bench's event mix (six apps, four types). */
function requestsOf(requests: number, perRequest: number): TelemetryEvent[][] {
  const generator = new EventGenerator(7);
  const now = Date.now();
  const out: TelemetryEvent[][] = [];
  for (let r = 0; r < requests; r++) {
    const events: TelemetryEvent[] = [];
    for (let i = 0; i < perRequest; i++) {
      const v = validateEvent(generator.next(now), LIMITS, now);
      if (!v.ok) throw new Error(`bench event not valid: ${v.rejection.reason}`);
      events.push(v.event);
    }
    out.push(events);
  }
  return out;
}

function serviceWith(parts: number): { service: IntakeService; drain: () => void } {
  const has = (p: IntakePart): boolean => INTAKE_PARTS.indexOf(p) < parts;
  const clock = { now: () => Date.now() };
  const errorLane = new BoundedLane('error', { maxEvents: 1_000_000, maxBytes: 1e12 });
  const standardLane = new BoundedLane('standard', { maxEvents: 1_000_000, maxBytes: 1e12 });
  const metrics = createMetrics();
  const limits = new RateLimits(1e9, new Map(), 1);
  const tally = new OutcomeTally(1_000_000);
  const options: IntakeServiceOptions = {
    limits: LIMITS,
    maxEventsPerRequest: 1000,
    sink: new LaneSink({
      errorLane,
      standardLane,
      writer: { notify: () => undefined, drainRate: new DrainRate(clock) },
      ack: 'queued',
      ackTimeoutMs: 1000,
      storageUp: () => true,
      toRow: (event) => event as unknown as StorageRow,
    }),
    rateLimiter: has('limiter') ? new MemoryRateLimiter(limits, clock) : null,
    clock,
    metrics,
    intakeMetrics: createIntakeMetrics(metrics.registry),
    ...(has('advice')
      ? { advisor: new SamplingAdvisor({ limits, instances: 1, drainPerSecond: () => 1e9 }) }
      : {}),
    ...(has('activity') ? { activity: new AppActivity() } : {}),
    ...(has('loss map') ? { outcomes: (c) => tally.add(c), apps: new AppBound(10_000) } : {}),
  };
  const drain = (): void => {
    for (const lane of [errorLane, standardLane]) lane.release(lane.shift(Number.MAX_SAFE_INTEGER));
  };
  return { service: new IntakeService(options), drain };
}

/**
 * Intake work per event (µs) of `perRequest`-event requests, per configuration: the median of
 * `rounds` passes over `requests` requests, the configurations interleaved so that the load of a
 * shared box falls on each alike. Process CPU time (all threads, so the intake's share of garbage
 * collection too), not wall time, which other work on a shared box stretches; only the intake
 * call is counted, not draining the lanes.
 */
export async function measureIntakeWork(
  perRequest: number,
  requests: number,
  rounds: number,
): Promise<IntakeWork> {
  const bodies = requestsOf(requests, perRequest);
  const setups = INTAKE_PARTS.map((_, i) => serviceWith(i + 1));
  const samples: number[][] = INTAKE_PARTS.map(() => []);
  for (let round = -1; round < rounds; round++) {
    for (let s = 0; s < setups.length; s++) {
      const { service, drain } = setups[s] as (typeof setups)[number];
      let us = 0;
      for (const events of bodies) {
        const t0 = process.cpuUsage();
        const outcome = await service.ingestValidated(events);
        const t = process.cpuUsage(t0);
        us += t.user + t.system;
        if (outcome.kind !== 'admitted' || outcome.accepted !== events.length)
          throw new Error(`intake bench request not taken whole: ${outcome.kind}`);
        drain();
      }
      // Round -1 warms the code up and is not counted.
      if (round >= 0) (samples[s] as number[]).push(us / (requests * perRequest));
    }
  }
  const work = {} as Record<IntakePart, number>;
  INTAKE_PARTS.forEach((p, i) => {
    const sorted = (samples[i] as number[]).slice().sort((a, b) => a - b);
    work[p] = sorted[Math.floor(sorted.length / 2)] as number;
  });
  return work;
}
