import { TEST_LIMITS, testLanes } from './intake-fixture';
import { IntakeDecider } from '../../../src/intake/intake-decider';
import { rawEvents, typedEvents } from '../../../src/intake/request-events';
import type { TelemetryEvent } from '../../../src/events/types';
import { validateEvent } from '../../../src/events/validate';
import { RateLimits } from '../../../src/ratelimit/event-rate-limiter';
import { MemoryRateLimiter } from '../../../src/ratelimit/memory-rate-limiter';
import { errorEvent, metric } from '../../support/events';

const NOW = 1_764_590_400_123;

function decider(standardCapacity: number, rateLimit: number) {
  const clock = { now: () => NOW };
  return new IntakeDecider({
    limits: TEST_LIMITS,
    sink: testLanes(clock, { errorEvents: 10, standardEvents: standardCapacity, maxBytes: 1e6 }).sink,
    rateLimiter: new MemoryRateLimiter(new RateLimits(rateLimit, new Map(), 1), clock),
    keysRefusals: true,
  });
}

describe('IntakeDecider: one request, one plain decision', () => {
  it('says per lane what was taken, per app what its limit refused, and which events a rule rejected', async () => {
    const events = [
      metric('a', { ts: NOW }),
      metric('a', { ts: NOW }),
      errorEvent('b', { ts: NOW }),
      metric('a', { ts: NOW, name: 'not dotted!' }),
      metric('c', { ts: NOW }),
    ];
    const d = await decider(10, 1).decide(rawEvents(events, TEST_LIMITS), null, NOW, {});
    expect(d.answer).toMatchObject({
      kind: 'throttled',
      accepted: 3,
      throttled: [1],
      reason: 'rate_limited',
    });
    expect(d.received).toEqual({ error: 1, lifecycle: 0, metric: 3, log: 0 });
    expect(d.rejected).toEqual([
      {
        reason: 'name_invalid',
        label: 'metric',
        subject: { app: 'a', ts: NOW, type: 'metric' },
        origin: 'direct',
      },
    ]);
    expect(d.limits.map((l) => l.result)).toEqual(['partial', 'allowed']);
    expect(d.overLimit.map((c) => [c.app, c.index])).toEqual([['a', 1]]);
    expect(d.offers.map((o) => [o.lane, o.refused, o.candidates.map((c) => c.index)])).toEqual([
      ['error', null, [2]],
      ['standard', null, [0, 4]],
    ]);
    expect(d.unread).toEqual([]);
    expect(d.requestRefused).toBeNull();
  });

  it('decides the same of typed events as of the raw events they were validated from', async () => {
    const raw = [metric('a', { ts: NOW }), errorEvent('b', { ts: NOW }), metric('a', { ts: NOW })];
    const typed = raw.map((r) => {
      const v = validateEvent(r, TEST_LIMITS, NOW);
      if (!v.ok) throw new Error(v.rejection.reason);
      return v.event as TelemetryEvent;
    });
    const fromRaw = await decider(2, 0).decide(rawEvents(raw, TEST_LIMITS), null, NOW, {});
    const fromTyped = await decider(2, 0).decide(typedEvents(typed), null, NOW, {});
    const shape = (d: typeof fromRaw) => ({
      answer: d.answer,
      received: d.received,
      offers: d.offers.map((o) => [o.lane, o.refused, o.candidates.map((c) => [c.index, c.app, c.bytes])]),
    });
    expect(shape(fromTyped)).toEqual(shape(fromRaw));
  });
});
