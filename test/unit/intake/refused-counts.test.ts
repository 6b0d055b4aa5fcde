import { TEST_LIMITS, testLanes } from './intake-fixture';
import { AppBound } from '../../../src/intake/app-bound';
import { IntakeService } from '../../../src/intake/intake-service';
import { createIntakeMetrics } from '../../../src/metrics/intake-instruments';
import { createMetrics } from '../../../src/metrics/instruments';
import type { OutcomeCount } from '../../../src/loss-map/outcome';
import { metric } from '../../support/events';

/**
 * The loss-map key of every event the intake refuses (rejected, or throttled unread when the lane
 * is full): an app that passes the app-name rule and the bound on distinct apps, else app `''`;
 * the app of the ingest key when the request has one; a time in the window, else the receipt's.
 */
const NOW = 1_764_590_400_123;
const MINUTE = NOW - (NOW % 60_000);
const LONG = 'a'.repeat(5400);

function setup(standardCapacity: number, maxApps = 0) {
  const clock = { now: () => NOW };
  const metrics = createMetrics();
  const counts: OutcomeCount[] = [];
  const service = new IntakeService({
    limits: TEST_LIMITS,
    maxEventsPerRequest: 100,
    sink: testLanes(clock, { errorEvents: 10, standardEvents: standardCapacity, maxBytes: 1e6 }).sink,
    rateLimiter: null,
    clock,
    metrics,
    intakeMetrics: createIntakeMetrics(metrics.registry),
    outcomes: (c) => counts.push(c),
    apps: new AppBound(maxApps),
  });
  const keys = () =>
    counts.map(({ app, minute, outcome, reason, count }) => ({ app, minute, outcome, reason, count }));
  return { service, keys };
}

const hostile = (): Array<Record<string, unknown>> => [
  metric('x\u0000', { ts: NOW }),
  metric('x\ud800', { ts: NOW }),
  metric(LONG, { ts: NOW }),
  metric('ok', { ts: 1e300 }),
  metric('ok', { ts: NOW + 3_600_000 }),
];

describe('loss-map keys of refused events', () => {
  it('rejected: an app that is not an app name under "", a ts outside the window at receipt', async () => {
    const { service, keys } = setup(10);
    await service.ingest(hostile());
    expect(keys()).toEqual([
      { app: '', minute: MINUTE, outcome: 'rejected', reason: 'source_invalid', count: 1 },
      { app: '', minute: MINUTE, outcome: 'rejected', reason: 'source_invalid', count: 1 },
      { app: '', minute: MINUTE, outcome: 'rejected', reason: 'source_invalid', count: 1 },
      { app: 'ok', minute: MINUTE, outcome: 'rejected', reason: 'ts_invalid', count: 1 },
      { app: 'ok', minute: MINUTE, outcome: 'rejected', reason: 'ts_out_of_range', count: 1 },
    ]);
  });

  it('throttled unread (the lane full): the same keys, never the raw values', async () => {
    const { service, keys } = setup(0);
    await service.ingest(hostile());
    expect(keys()).toEqual([
      { app: '', minute: MINUTE, outcome: 'throttled', reason: 'queue_full', count: 3 },
      { app: 'ok', minute: MINUTE, outcome: 'throttled', reason: 'queue_full', count: 2 },
    ]);
  });

  it('rejected events of apps the bound refuses are counted under "", not one key per name', async () => {
    const { service, keys } = setup(10, 2);
    const invalid = (app: string) => metric(app, { name: 'not dotted!' });
    await service.ingest(['a1', 'a2', 'a3', 'a4', 'a1'].map(invalid));
    expect(keys().map((k) => [k.app, k.count])).toEqual([
      ['a1', 1],
      ['a2', 1],
      ['', 1],
      ['', 1],
      ['a1', 1],
    ]);
  });

  it("with an ingest key: every refusal is the key's app's, whatever app the event names", async () => {
    const { service, keys } = setup(10);
    const principal = { kind: 'ingest', keyId: 'k', app: 'web-shop' } as const;
    await service.ingest([...hostile(), metric('victim', { ts: NOW })], principal);
    expect(new Set(keys().map((k) => k.app))).toEqual(new Set(['web-shop']));
    expect(keys().map((k) => k.reason)).toEqual([
      'source_invalid',
      'source_invalid',
      'source_invalid',
      'ts_invalid',
      'ts_out_of_range',
      'app_mismatch',
    ]);
  });
});
