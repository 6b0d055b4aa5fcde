import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { loadConfig } from '../../src/config/load';
import { createLogger } from '../../src/log/logger';
import { createIntakeMetrics } from '../../src/metrics/intake-instruments';
import { RateLimits, type LimitAsk } from '../../src/ratelimit/event-rate-limiter';
import { RedisRateLimiter } from '../../src/ratelimit/redis-rate-limiter';
import { waitFor } from '../support/http';
import { redisUrl, uniquePrefix } from '../support/redis';
import { reachable } from '../support/services';

const subject = (app: string) => ({ key: `app:${app}`, app });
const ask = (app: string, events: number, mode: LimitAsk['mode'] = 'partial'): LimitAsk => ({
  subject: subject(app),
  events,
  mode,
});

/** The shared budget (rate-limiter-flexible's RateLimiterRedis) against a real Redis, with the default lease. */
describe('RedisRateLimiter (real Redis)', () => {
  let redis: Redis;
  let limiter: RedisRateLimiter;
  const prefix = uniquePrefix('bucket');

  beforeAll(async () => {
    if (!(await reachable(redisUrl()))) {
      throw new Error(`Redis is not reachable at ${redisUrl()}: start it with redis-server --daemonize yes`);
    }
    redis = new Redis(redisUrl(), { enableOfflineQueue: false, lazyConnect: false, maxRetriesPerRequest: 0 });
    await new Promise((r) => redis.once('ready', r));
    limiter = new RedisRateLimiter({
      redis,
      limits: new RateLimits(100, new Map([['small', 10]]), 1),
      keyPrefix: prefix,
      expectedInstances: 1,
      leaseMs: loadConfig({}).redisLeaseMs,
      clock: { now: () => Date.now() },
      logger: createLogger('silent'),
      metrics: createIntakeMetrics(new Registry()),
    });
  });
  afterAll(async () => {
    await limiter?.close();
    redis?.disconnect();
  });

  it('grants in part per app, in request order, and says when the window ends', async () => {
    const grants = await limiter.spend([ask('a', 150), ask('small', 4), ask('small-too', 50)]);
    expect(grants.map((g) => g.granted)).toEqual([100, 4, 50]);
    expect(grants[0]?.retryAfterMs).toBeGreaterThan(0);
    expect(grants[0]?.retryAfterMs).toBeLessThanOrEqual(1000);
    expect(grants.every((g) => g.store === 'redis')).toBe(true);
    // 'small' holds a lease of one event; its window has 5 left.
    expect((await limiter.spend([ask('small', 10)]))[0]?.granted).toBe(6);
    // The library's counter, one key per app under the prefix.
    expect(Number(await redis.get(`${prefix}:app:small`))).toBe(10);
  });

  it('whole: takes past the budget while it is positive and makes later requests repay the debt', async () => {
    expect((await limiter.spend([ask('w', 300, 'whole')]))[0]?.granted).toBe(300);
    const refused = (await limiter.spend([ask('w', 1, 'whole')]))[0];
    expect(refused?.granted).toBe(0);
    // A debt of 200 at 100/s, carried by a block past the window: about 3 s.
    expect(await redis.pttl(`${prefix}:app:w`)).toBeGreaterThan(1500);
    expect(refused?.retryAfterMs).toBeGreaterThan(0);
  });

  it('refund gives budget back: into the lease up to a block, the rest to the shared window', async () => {
    expect((await limiter.spend([ask('r', 100)]))[0]?.granted).toBe(100);
    limiter.refund(subject('r'), 60);
    await waitFor(
      'the window to count the return',
      async () => (await redis.get(`${prefix}:app:r`)) === '50',
    );
    expect((await limiter.spend([ask('r', 10)]))[0]).toEqual({
      granted: 10,
      retryAfterMs: 0,
      store: 'redis',
    });
  });
});
