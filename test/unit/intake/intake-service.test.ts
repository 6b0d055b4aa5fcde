import { TEST_LIMITS, testLanes } from './intake-fixture';
import { IntakeService } from '../../../src/intake/intake-service';
import { createIntakeMetrics } from '../../../src/metrics/intake-instruments';
import { createMetrics } from '../../../src/metrics/instruments';
import { RateLimits } from '../../../src/ratelimit/event-rate-limiter';
import { MemoryRateLimiter } from '../../../src/ratelimit/memory-rate-limiter';
import { errorEvent, metric } from '../../support/events';
import { telemetryEvent } from '../../support/telemetry-events';

function setup(standardCapacity = 3, rateLimit = 0) {
  const clock = { now: () => Date.now() };
  const { sink, errorLane, standardLane } = testLanes(clock, {
    errorEvents: 10,
    standardEvents: standardCapacity,
    maxBytes: 1e6,
  });
  const metrics = createMetrics();
  const service = new IntakeService({
    limits: TEST_LIMITS,
    maxEventsPerRequest: 100,
    sink,
    rateLimiter: rateLimit > 0 ? new MemoryRateLimiter(new RateLimits(rateLimit, new Map(), 1), clock) : null,
    clock,
    metrics,
    intakeMetrics: createIntakeMetrics(metrics.registry),
  });
  return { service, errorLane, standardLane, metrics };
}

describe('IntakeService', () => {
  it('sheds non-error events unvalidated once the standard lane is full, still taking errors', async () => {
    const { service, errorLane } = setup(3);
    expect(await service.ingest([metric('a'), metric('a'), metric('a')])).toMatchObject({
      kind: 'admitted',
      accepted: 3,
    });
    const out = await service.ingest([{ type: 'metric', junk: true }, errorEvent('a'), metric('a')]);
    expect(out).toMatchObject({
      kind: 'throttled',
      accepted: 1,
      rejected: [],
      throttled: [0, 2],
      reason: 'queue_full',
    });
    expect(errorLane.heldEvents).toBe(1);
  });

  it('sheds the non-error events unvalidated when the lane lacks room for all of them, though not full', async () => {
    const { service, standardLane, metrics } = setup(5);
    await service.ingest([metric('a'), metric('a'), metric('a')]);
    const out = await service.ingest([
      metric('a'),
      { type: 'log', junk: true },
      errorEvent('a'),
      metric('a'),
    ]);
    expect(out).toMatchObject({ kind: 'throttled', accepted: 1, throttled: [0, 1, 3], reason: 'queue_full' });
    expect(standardLane.heldEvents).toBe(3);
    const throttled = (await metrics.eventsThrottled.get()).values;
    expect(throttled.find((v) => v.labels.type === 'unvalidated')?.value).toBe(3);
    // Room for both: taken (and validated).
    expect(await service.ingest([metric('a'), metric('a')])).toMatchObject({ kind: 'admitted', accepted: 2 });
  });

  it('splits a mixed request: errors taken, over-limit events rate limited with Retry-After', async () => {
    const { service } = setup(100, 2);
    const out = await service.ingest([metric('a'), errorEvent('a'), metric('a')]);
    expect(out).toMatchObject({ kind: 'admitted', accepted: 3 });
    const over = await service.ingest([metric('a'), errorEvent('a')]);
    expect(over).toMatchObject({ kind: 'throttled', accepted: 1, throttled: [0], reason: 'rate_limited' });
    if (over.kind === 'throttled') expect(over.retryAfterSeconds).toBe(1);
  });

  it('admits up to the budget in request order and throttles the rest, errors past the limiter', async () => {
    const { service } = setup(100, 3);
    const out = await service.ingest([
      metric('a'),
      metric('a'),
      errorEvent('a'),
      metric('a'),
      metric('a'),
      metric('a'),
    ]);
    expect(out).toMatchObject({ kind: 'throttled', accepted: 4, throttled: [4, 5], reason: 'rate_limited' });
  });

  it('whole: takes a request larger than the budget while it is positive, then refuses whole', async () => {
    const { service, errorLane, standardLane } = setup(100, 3);
    const big = [metric('a'), metric('a'), metric('a'), metric('a'), metric('a')];
    expect(await service.ingest(big, null, { whole: true })).toMatchObject({ kind: 'admitted', accepted: 5 });
    const refused = await service.ingest([errorEvent('a'), metric('a')], null, { whole: true });
    expect(refused).toMatchObject({
      kind: 'throttled',
      accepted: 0,
      throttled: [0, 1],
      reason: 'rate_limited',
    });
    expect(errorLane.heldEvents).toBe(0);
    expect(standardLane.heldEvents).toBe(5);
  });

  it('ingestValidated admits typed events as built (no second validation), with the same key and lane rules', async () => {
    const { service, standardLane } = setup(2);
    // A name validation would refuse: proof that it is not validated again.
    const unchecked = telemetryEvent('metric', { name: 'not a dotted name' });
    const key = { kind: 'ingest', keyId: 'k1', app: 'web-shop' } as const;
    expect(await service.ingestValidated([unchecked, telemetryEvent('log', { app: 'other' })], key)).toEqual({
      kind: 'admitted',
      accepted: 1,
      rejected: [
        {
          index: 1,
          reason: 'app_mismatch',
          field: 'source.app',
          hint: 'source.app must be the app this API key was made for',
        },
      ],
      advice: [],
    });
    expect(standardLane.heldEvents).toBe(1);
    const more = [telemetryEvent('error'), telemetryEvent('metric'), telemetryEvent('metric')];
    expect(await service.ingestValidated(more, key)).toMatchObject({
      kind: 'throttled',
      accepted: 1,
      throttled: [1, 2],
      reason: 'queue_full',
    });
  });
});
