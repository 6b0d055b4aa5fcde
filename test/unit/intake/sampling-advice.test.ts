import {
  ADVICE_HEADROOM,
  ADVICE_HOLD_MS,
  MIN_ADVICE,
  SamplingAdvisor,
} from '../../../src/intake/sampling-advice';
import { RateLimits } from '../../../src/ratelimit/event-rate-limiter';

const subject = (app: string) => ({ key: `app:${app}`, app });

/** An advisor with a limit of 100/s, fed `perSecond` events of `app` each second for `seconds`. */
function fed(o: { instances?: number; drain?: number } = {}): {
  advisor: SamplingAdvisor;
  clock: { t: number };
  feed: (app: string | Record<string, number>, perSecond: number, seconds: number) => void;
} {
  const clock = { t: 1_000_000 };
  const advisor = new SamplingAdvisor({
    limits: new RateLimits(100, new Map([['big', 1000]]), 10),
    instances: o.instances ?? 1,
    drainPerSecond: o.drain === undefined ? null : () => o.drain as number,
  });
  /** `perSecond` of `app` (or each app's rate of a record) for `seconds`, side by side. */
  const feed = (app: string | Record<string, number>, perSecond: number, seconds: number) => {
    const rates = typeof app === 'string' ? { [app]: perSecond } : app;
    // Four reports a second, as an SDK flushing a batch every 250 ms.
    for (let i = 0; i < seconds * 4; i++) {
      clock.t += 250;
      for (const [name, rate] of Object.entries(rates)) advisor.demand(subject(name), rate / 4, clock.t);
    }
  };
  return { advisor, clock, feed };
}

describe('SamplingAdvisor', () => {
  it('advises 1 to an app its limit never refused, however much it sends (its burst is its own)', () => {
    const { advisor, clock, feed } = fed();
    feed('a', 300, 5);
    expect(advisor.advice(subject('a'), clock.t)).toBe(1);
  });

  it('once the limit refuses it, advises the share of its demand the limit takes, with headroom', () => {
    const { advisor, clock, feed } = fed();
    feed('a', 300, 20);
    advisor.limited(subject('a'), clock.t);
    const advice = advisor.advice(subject('a'), clock.t);
    expect(advice).toBeGreaterThan((100 / 300) * ADVICE_HEADROOM * 0.97);
    expect(advice).toBeLessThan((100 / 300) * ADVICE_HEADROOM * 1.03);
  });

  it('measures a new app’s demand at once (no ramp from zero)', () => {
    const { advisor, clock, feed } = fed();
    feed('a', 1000, 2);
    advisor.limited(subject('a'), clock.t);
    expect(advisor.advice(subject('a'), clock.t)).toBeCloseTo(0.105, 1);
  });

  it('keeps the advice while the app sends at its share (little is refused then), and drops it after', () => {
    const { advisor, clock, feed } = fed();
    feed('a', 300, 10);
    advisor.limited(subject('a'), clock.t);
    feed('a', 300, (ADVICE_HOLD_MS - 1000) / 1000);
    expect(advisor.advice(subject('a'), clock.t)).toBeLessThan(0.4);
    feed('a', 300, 2);
    expect(advisor.advice(subject('a'), clock.t)).toBe(1);
  });

  it('follows a load that ends: the advice climbs back to 1 as the demand falls', () => {
    const { advisor, clock, feed } = fed();
    feed('a', 300, 20);
    advisor.limited(subject('a'), clock.t);
    feed('a', 0, 15);
    advisor.limited(subject('a'), clock.t);
    expect(advisor.advice(subject('a'), clock.t)).toBe(1);
  });

  it('uses each app’s own limit, and this collector’s share of it with several collectors', () => {
    const { advisor, clock, feed } = fed({ instances: 4 });
    feed({ big: 1000, a: 100 }, 0, 20);
    advisor.limited(subject('big'), clock.t);
    advisor.limited(subject('a'), clock.t);
    // This collector sees a quarter of each app's requests: 1000/s seen against 250/s of a 1000 limit.
    expect(advisor.advice(subject('big'), clock.t)).toBeCloseTo(0.25 * ADVICE_HEADROOM, 1);
    expect(advisor.advice(subject('a'), clock.t)).toBeCloseTo(0.25 * ADVICE_HEADROOM, 1);
  });

  it('under overload, holds every app to a max-min fair share of the drain: a quiet app is not cut', () => {
    const { advisor, clock, feed } = fed({ drain: 1000 });
    feed({ loud: 3000, quiet: 10 }, 0, 20);
    advisor.overloaded(clock.t);
    expect(advisor.advice(subject('quiet'), clock.t)).toBe(1);
    // 990/s left for the loud app's 3000/s.
    expect(advisor.advice(subject('loud'), clock.t)).toBeCloseTo((990 / 3000) * ADVICE_HEADROOM, 1);
  });

  it("takes a new app's first report as a rate over a second at least, not over its first millisecond", () => {
    const { advisor, clock, feed } = fed({ drain: 10_000 });
    feed('loud', 100_000, 10);
    advisor.overloaded(clock.t);
    // A quiet app's first client report: the 50 events of its first 5 s flush, all at once.
    advisor.demand(subject('quiet'), 50, clock.t);
    expect(advisor.advice(subject('quiet'), clock.t)).toBe(1);
  });

  it('never advises below its floor, and forgets apps beyond its bound without growing', () => {
    const { advisor, clock } = fed();
    advisor.demand(subject('x'), 1e9, clock.t);
    advisor.limited(subject('x'), clock.t);
    expect(advisor.advice(subject('x'), clock.t)).toBe(MIN_ADVICE);
    for (let i = 0; i < 30_000; i++) advisor.demand(subject(`app-${i}`), 1, clock.t);
    expect(advisor.advice(subject('app-29999'), clock.t)).toBe(1);
  });
});
