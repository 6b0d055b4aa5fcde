import { RateLimits, type LimitAsk, type LimitGrant } from '../../../src/ratelimit/event-rate-limiter';
import { MemoryRateLimiter } from '../../../src/ratelimit/memory-rate-limiter';

const subject = (app: string) => ({ key: `app:${app}`, app });
const ask = (app: string, events: number, mode: LimitAsk['mode'] = 'partial'): LimitAsk => ({
  subject: subject(app),
  events,
  mode,
});

function limiter(limits: RateLimits) {
  const clock = { t: 0, now: () => clock.t };
  const l = new MemoryRateLimiter(limits, clock);
  const spend = async (a: LimitAsk): Promise<LimitGrant> => {
    const [grant] = await l.spend([a]);
    if (grant === undefined) throw new Error('no grant');
    return grant;
  };
  return { l, clock, spend };
}

describe('MemoryRateLimiter', () => {
  it('grants what the budget holds, in part, and says when the rest frees', async () => {
    const { spend } = limiter(new RateLimits(10, new Map(), 1));
    expect(await spend(ask('a', 6))).toEqual({ granted: 6, retryAfterMs: 0, store: 'memory' });
    const partial = await spend(ask('a', 6));
    expect(partial.granted).toBe(4);
    expect(partial.retryAfterMs).toBe(200); // the other 2 at 10/s
    expect((await spend(ask('a', 1))).granted).toBe(0);
  });

  it('a request larger than a whole window still makes progress at the limit rate', async () => {
    const { spend, clock } = limiter(new RateLimits(100, new Map(), 1));
    let rest = 1000;
    let elapsed = 0;
    let rounds = 0;
    while (rest > 0 && rounds < 100) {
      const g = await spend(ask('a', rest));
      rest -= g.granted;
      rounds++;
      if (rest > 0) {
        expect(g.retryAfterMs).toBeGreaterThan(0);
        expect(g.retryAfterMs).toBeLessThanOrEqual(1000);
        clock.t += g.retryAfterMs;
        elapsed += g.retryAfterMs;
      }
    }
    expect(rest).toBe(0);
    // 100 at once, then 100 a second: 9 seconds for the other 900.
    expect(elapsed).toBe(9000);
    expect(rounds).toBe(10);
  });

  it('whole: takes a request larger than the budget while the budget is positive, then repays the debt', async () => {
    const { spend, clock } = limiter(new RateLimits(100, new Map(), 1));
    expect((await spend(ask('a', 350, 'whole'))).granted).toBe(350);
    const refused = await spend(ask('a', 1, 'whole'));
    expect(refused.granted).toBe(0);
    expect(refused.retryAfterMs).toBe(2510); // debt of 250, then one token
    clock.t += 2500;
    expect((await spend(ask('a', 1, 'whole'))).granted).toBe(0);
    clock.t += 10;
    expect((await spend(ask('a', 500, 'whole'))).granted).toBe(500);
  });

  it('keeps apps apart and applies per-app overrides; 0 is unlimited', async () => {
    const { l } = limiter(
      new RateLimits(
        2,
        new Map([
          ['big', 100],
          ['free', 0],
        ]),
        1,
      ),
    );
    const grants = await l.spend([ask('small', 3), ask('big', 100), ask('free', 1_000_000)]);
    expect(grants.map((g) => g.granted)).toEqual([2, 100, 1_000_000]);
  });

  it('refund gives budget back, never above one window', async () => {
    const { l, spend } = limiter(new RateLimits(5, new Map(), 1));
    expect((await spend(ask('a', 5))).granted).toBe(5);
    l.refund(subject('a'), 50);
    expect((await spend(ask('a', 10))).granted).toBe(5);
  });

  it('refills continuously: half a window later, half the budget is back', async () => {
    const { spend, clock } = limiter(new RateLimits(10, new Map(), 1));
    expect((await spend(ask('a', 10))).granted).toBe(10);
    clock.t += 500;
    expect((await spend(ask('a', 10))).granted).toBe(5);
  });
});

describe('MemoryRateLimiter with a burst allowance', () => {
  it('takes a flush of several seconds of the limit whole, and no more than the limit over time', async () => {
    const { spend, clock } = limiter(new RateLimits(100, new Map(), 10));
    // An SDK at the limit flushing every 5 s: 500 at once, every time.
    for (let flush = 0; flush < 12; flush++) {
      expect((await spend(ask('a', 500))).granted).toBe(500);
      clock.t += 5000;
    }
    // Over a minute: what the rate refilled plus the burst, never more.
    let granted = 0;
    for (let s = 0; s < 60; s++) {
      granted += (await spend(ask('a', 1000))).granted;
      clock.t += 1000;
    }
    expect(granted).toBe(1000 + 59 * 100);
  });

  it('a spent burst refills at the limit, and Retry-After stays within a second of it', async () => {
    const { spend, clock } = limiter(new RateLimits(100, new Map(), 10));
    expect((await spend(ask('a', 1500))).granted).toBe(1000);
    const refused = await spend(ask('a', 300));
    expect(refused).toMatchObject({ granted: 0, retryAfterMs: 1000 });
    clock.t += 1000;
    expect((await spend(ask('a', 300))).granted).toBe(100);
  });

  it('a refund never lifts a bucket above its burst', async () => {
    const { l, spend } = limiter(new RateLimits(10, new Map(), 3));
    expect((await spend(ask('a', 30))).granted).toBe(30);
    l.refund(subject('a'), 100);
    expect((await spend(ask('a', 100))).granted).toBe(30);
  });
});
