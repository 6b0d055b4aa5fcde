import { RateLimits } from '../../../src/ratelimit/event-rate-limiter';
import { MemoryRateLimiter } from '../../../src/ratelimit/memory-rate-limiter';

const subject = (app: string) => ({ key: `app:${app}`, app });

describe('MemoryRateLimiter', () => {
  it('admits a request whole or not at all, and a refused one uses no budget', async () => {
    const l = new MemoryRateLimiter(new RateLimits(10));
    expect((await l.consume(subject('a'), 6)).allowed).toBe(true);
    const refused = await l.consume(subject('a'), 6);
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfterMs).toBeGreaterThan(0);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(1000);
    expect((await l.consume(subject('a'), 4)).allowed).toBe(true);
    expect((await l.consume(subject('a'), 1)).allowed).toBe(false);
  });

  it('keeps apps apart and applies per-app overrides; 0 is unlimited', async () => {
    const l = new MemoryRateLimiter(
      new RateLimits(
        2,
        new Map([
          ['big', 100],
          ['free', 0],
        ]),
      ),
    );
    expect((await l.consume(subject('small'), 3)).allowed).toBe(false);
    expect((await l.consume(subject('big'), 100)).allowed).toBe(true);
    expect((await l.consume(subject('free'), 1_000_000)).allowed).toBe(true);
  });

  it('splits a limit across instances (the insurance of the Redis limiter)', async () => {
    const l = new MemoryRateLimiter(new RateLimits(90), 'insurance', 3);
    const d = await l.consume(subject('a'), 31);
    expect(d).toMatchObject({ allowed: false, store: 'insurance' });
    expect((await l.consume(subject('a'), 30)).allowed).toBe(true);
  });

  it('refund gives budget back', async () => {
    const l = new MemoryRateLimiter(new RateLimits(5));
    expect((await l.consume(subject('a'), 5)).allowed).toBe(true);
    l.refund(subject('a'), 5);
    await new Promise((r) => setImmediate(r));
    expect((await l.consume(subject('a'), 5)).allowed).toBe(true);
  });
});
