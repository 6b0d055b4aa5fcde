import fc from 'fast-check';
import type { OutcomeCount } from '../../../src/loss-map/outcome';
import { OutcomeTally } from '../../../src/loss-map/outcome-tally';

const count = fc.record({
  app: fc.constantFrom('web', 'ios', ''),
  minute: fc.constantFrom(0, 60_000, 120_000),
  type: fc.constantFrom('metric', 'log', 'error'),
  outcome: fc.constantFrom('accepted', 'throttled', 'rejected') as fc.Arbitrary<OutcomeCount['outcome']>,
  reason: fc.constantFrom('', 'queue_full', 'invalid_ts'),
  origin: fc.constantFrom('sdk', 'direct', '') as fc.Arbitrary<OutcomeCount['origin']>,
  count: fc.integer({ min: 0, max: 50 }),
});

const keyOf = (c: OutcomeCount): string =>
  JSON.stringify([c.app, c.minute, c.type, c.outcome, c.reason, c.origin]);

describe('OutcomeTally', () => {
  it('sums counts per key and hands each key once, then starts empty', () => {
    fc.assert(
      fc.property(fc.array(count, { maxLength: 200 }), (counts) => {
        const tally = new OutcomeTally(10_000);
        const expected = new Map<string, number>();
        for (const c of counts) {
          expect(tally.add(c)).toBe(true);
          if (c.count > 0) expected.set(keyOf(c), (expected.get(keyOf(c)) ?? 0) + c.count);
        }
        expect(tally.size).toBe(expected.size);
        const taken = tally.drain();
        expect(new Map(taken.map((c) => [keyOf(c), c.count]))).toEqual(expected);
        expect(taken).toHaveLength(expected.size);
        expect(tally.size).toBe(0);
        expect(tally.drain()).toEqual([]);
      }),
    );
  });

  it('refuses a new key past maxKeys, and still adds to the keys it holds', () => {
    const tally = new OutcomeTally(2);
    const base: OutcomeCount = {
      app: 'a',
      minute: 0,
      type: 'log',
      outcome: 'accepted',
      reason: '',
      origin: 'direct',
      count: 1,
    };
    expect(tally.add(base)).toBe(true);
    expect(tally.add({ ...base, minute: 60_000 })).toBe(true);
    expect(tally.add({ ...base, app: 'b' })).toBe(false);
    expect(tally.add({ ...base, count: 2 })).toBe(true);
    expect(tally.drain().map((c) => c.count)).toEqual([3, 1]);
  });
});
