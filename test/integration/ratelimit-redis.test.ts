import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { loadConfig } from '../../src/config/load';
import { createLogger } from '../../src/log/logger';
import { createAdmissionMetrics } from '../../src/metrics/admission-instruments';
import { RateLimits, type LimitAsk } from '../../src/ratelimit/event-rate-limiter';
import { RedisRateLimiter } from '../../src/ratelimit/redis-rate-limiter';
import { redisUrl, uniquePrefix } from '../support/redis';
import { reachable } from '../support/services';
import { waitFor } from '../support/http';

const subject = (app: string) => ({ key: `app:${app}`, app });
const ask = (app: string, events: number, mode: LimitAsk['mode'] = 'partial'): LimitAsk => ({
  subject: subject(app),
  events,
  mode,
});

/** The Redis token bucket (one script call for every app a request's leases do not cover) against a real Redis, with the default lease. */
describe('RedisRateLimiter (real Redis)', () => {
  let redis: Redis;
  let limiter: RedisRateLimiter;
  let monitor: Redis;
  let monitorSource: Redis;
  const commands: string[] = [];

  beforeAll(async () => {
    if (!(await reachable(redisUrl()))) {
      throw new Error(`Redis is not reachable at ${redisUrl()}: start it with redis-server --daemonize yes`);
    }
    redis = new Redis(redisUrl(), { enableOfflineQueue: false, lazyConnect: false, maxRetriesPerRequest: 0 });
    await new Promise((r) => redis.once('ready', r));
    const registry = new Registry();
    limiter = new RedisRateLimiter({
      redis,
      limits: new RateLimits(100, new Map([['small', 10]])),
      keyPrefix: uniquePrefix('bucket'),
      expectedInstances: 1,
      retryMs: 1000,
      leaseMs: loadConfig({}).redisLeaseMs,
      clock: { now: () => Date.now() },
      logger: createLogger('silent'),
      metrics: createAdmissionMetrics(registry),
    });
    // MONITOR takes a connection of its own: both are closed after the tests.
    monitorSource = redis.duplicate();
    monitor = await monitorSource.monitor();
    monitor.on('monitor', (_time: string, args: string[]) => commands.push(String(args[0]).toLowerCase()));
  });
  afterAll(async () => {
    await limiter?.close();
    redis?.disconnect();
    monitor?.disconnect();
    monitorSource?.disconnect();
  });

  it('grants in part, in one script call for every app of the request', async () => {
    commands.length = 0;
    const grants = await limiter.take([ask('a', 150), ask('small', 4), ask('small-too', 50)]);
    expect(grants.map((g) => g.granted)).toEqual([100, 4, 50]);
    expect(grants[0]?.retryAfterMs).toBeGreaterThan(0);
    expect(grants[0]?.retryAfterMs).toBeLessThanOrEqual(500);
    expect(grants.every((g) => g.store === 'redis')).toBe(true);
    const again = await limiter.take([ask('small', 10)]);
    expect(again[0]?.granted).toBeLessThanOrEqual(7);
    const evals = () => commands.filter((c) => c === 'evalsha' || c === 'eval').length;
    // MONITOR reports asynchronously: wait for both calls, then check there were no more.
    await waitFor('both script calls seen by MONITOR', () => evals() >= 2, 5000);
    await limiter.take([ask('marker', 1)]);
    await waitFor('the marker call', () => evals() >= 3, 5000);
    expect(evals()).toBeLessThanOrEqual(4); // one per take (a first EVAL when the script was not loaded)
  });

  it('whole: takes past the budget while it is positive and makes later requests repay the debt', async () => {
    expect((await limiter.take([ask('w', 300, 'whole')]))[0]?.granted).toBe(300);
    const refused = (await limiter.take([ask('w', 1, 'whole')]))[0];
    expect(refused?.granted).toBe(0);
    expect(refused?.retryAfterMs).toBeGreaterThan(1500); // a debt of ~200 at 100/s
  });

  it('refund gives budget back', async () => {
    expect((await limiter.take([ask('r', 100)]))[0]?.granted).toBe(100);
    limiter.refund(subject('r'), 60);
    // The refund is fire-and-forget; the next call on the same connection comes after it.
    expect((await limiter.take([ask('r', 100)]))[0]?.granted).toBeGreaterThanOrEqual(60);
  });
});
