import { TEST_LIMITS, testLanes } from './intake-fixture';
import { IntakeService } from '../../../src/intake/intake-service';
import { AppActivity } from '../../../src/metrics/app-activity';
import { createIntakeMetrics } from '../../../src/metrics/intake-instruments';
import { createMetrics } from '../../../src/metrics/instruments';
import { RateLimits } from '../../../src/ratelimit/event-rate-limiter';
import { MemoryRateLimiter } from '../../../src/ratelimit/memory-rate-limiter';
import { errorEvent, metric } from '../../support/events';

/**
 * What intake records of a request costs per request, not per event: a request of 100 events
 * touches each Prometheus series and each app's activity tally once, with the request's count.
 */
function setup() {
  const clock = { now: () => Date.now() };
  const metrics = createMetrics();
  const intakeMetrics = createIntakeMetrics(metrics.registry);
  const activity = new AppActivity();
  const service = new IntakeService({
    limits: TEST_LIMITS,
    maxEventsPerRequest: 1000,
    sink: testLanes(clock, { errorEvents: 1000, standardEvents: 1000, maxBytes: 1e7 }).sink,
    rateLimiter: new MemoryRateLimiter(new RateLimits(10, new Map(), 1), clock),
    clock,
    metrics,
    intakeMetrics,
    activity,
  });
  return { service, metrics, intakeMetrics, activity };
}

const times = <T>(n: number, make: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => make(i));

describe('intake records per request', () => {
  it('counts 100 rejected events with one increment per reason and per type', async () => {
    const { service, metrics } = setup();
    const rejected = jest.spyOn(metrics.eventsRejected, 'inc');
    const received = jest.spyOn(metrics.eventsReceived, 'inc');
    await service.ingest(times(100, () => metric('a', { name: 'not dotted!' })));
    expect(rejected).toHaveBeenCalledTimes(1);
    expect(rejected).toHaveBeenCalledWith({ reason: 'name_invalid' }, 100);
    expect(received).toHaveBeenCalledTimes(1);
    expect(received).toHaveBeenCalledWith({ type: 'metric' }, 100);
  });

  it("tallies 100 error events of one app as one update of the app's activity", async () => {
    const { service, activity } = setup();
    const record = jest.spyOn(activity, 'record');
    expect(await service.ingest(times(100, () => errorEvent('a')))).toMatchObject({ accepted: 100 });
    expect(record).toHaveBeenCalledTimes(1);
    expect(activity.all.get('a')).toMatchObject({ accepted: 100, errors: 100, throttled: 0 });
  });

  it('counts the rate-limit verdicts of a request of many apps once per result', async () => {
    const { service, intakeMetrics } = setup();
    const decisions = jest.spyOn(intakeMetrics.decisions, 'inc');
    await service.ingest(times(100, (i) => metric(`app-${i % 50}`)));
    expect(decisions).toHaveBeenCalledTimes(1);
    expect(decisions).toHaveBeenCalledWith({ result: 'allowed', store: 'memory' }, 50);
  });
});
