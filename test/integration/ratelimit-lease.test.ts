import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { createLogger } from '../../src/log/logger';
import { createIntakeMetrics, type IntakeMetrics } from '../../src/metrics/intake-instruments';
import { leaseBlock } from '../../src/ratelimit/budget-lease';
import { RateLimits, type LimitAsk, type LimitGrant } from '../../src/ratelimit/event-rate-limiter';
import { RedisRateLimiter } from '../../src/ratelimit/redis-rate-limiter';
import { waitFor } from '../support/http';
import { redisUrl, startPrivateRedis, uniquePrefix } from '../support/redis';
import { reachable } from '../support/services';

const subject = (app: string) => ({ key: `app:${app}`, app });
const ask = (app: string, events: number, mode: LimitAsk['mode'] = 'partial'): LimitAsk => ({
  subject: subject(app),
  events,
  mode,
});

const LEASE_MS = 100;

interface Collector {
  readonly limiter: RedisRateLimiter;
  readonly redis: Redis;
  readonly metrics: IntakeMetrics;
  spend(a: LimitAsk): Promise<LimitGrant>;
}

/** A counter's value, summed over its labels or for one label set. */
async function count(
  c: { get(): Promise<{ values: Array<{ value: number; labels: object }> }> },
  labels: Record<string, string> = {},
): Promise<number> {
  const { values } = await c.get();
  return values
    .filter((v) => Object.entries(labels).every(([k, l]) => (v.labels as Record<string, unknown>)[k] === l))
    .reduce((sum, v) => sum + v.value, 0);
}

/**
 * The leased Redis limiter against a real Redis: several limiters (one per collector) share one
 * key prefix. A fake clock drives the lease's life; Redis's clock drives its buckets.
 */
describe('RedisRateLimiter leases (real Redis)', () => {
  const clients: Redis[] = [];
  const limiters: RedisRateLimiter[] = [];

  async function client(url = redisUrl()): Promise<Redis> {
    const redis = new Redis(url, {
      enableOfflineQueue: false,
      lazyConnect: false,
      maxRetriesPerRequest: 0,
      commandTimeout: 200,
    });
    redis.on('error', () => undefined);
    clients.push(redis);
    await new Promise((r) => redis.once('ready', r));
    return redis;
  }

  async function collector(o: {
    prefix: string;
    limit: number;
    clock?: { now(): number };
    url?: string;
    instances?: number;
  }): Promise<Collector> {
    const metrics = createIntakeMetrics(new Registry());
    const redis = await client(o.url);
    const limiter = new RedisRateLimiter({
      redis,
      limits: new RateLimits(o.limit, new Map(), 1),
      keyPrefix: o.prefix,
      expectedInstances: o.instances ?? 1,
      leaseMs: LEASE_MS,
      clock: o.clock ?? { now: () => Date.now() },
      logger: createLogger('silent'),
      metrics,
    });
    limiters.push(limiter);
    return {
      limiter,
      redis,
      metrics,
      async spend(a) {
        const [g] = await limiter.spend([a]);
        if (g === undefined) throw new Error('no grant');
        return g;
      },
    };
  }

  beforeAll(async () => {
    if (!(await reachable(redisUrl()))) {
      throw new Error(`Redis is not reachable at ${redisUrl()}: start it with redis-server --daemonize yes`);
    }
  });
  afterAll(async () => {
    await Promise.all(limiters.map((l) => l.close()));
    for (const c of clients) c.disconnect();
  });

  it('three collectors admit at most the limit plus one lease each in a burst, and all of it', async () => {
    const LIMIT = 100;
    const block = leaseBlock(LIMIT, LEASE_MS);
    expect(block).toBe(10);
    const prefix = uniquePrefix('lease-bound');
    const clock = { now: () => 0 }; // leases never age here: the bound must hold without expiry
    const three = [
      await collector({ prefix, limit: LIMIT, clock }),
      await collector({ prefix, limit: LIMIT, clock }),
      await collector({ prefix, limit: LIMIT, clock }),
    ];
    // Each takes one event and leases a block; then the shared window ends (its key expires).
    for (const c of three) expect((await c.spend(ask('burst', 1))).granted).toBe(1);
    const redis = await client();
    await waitFor(
      'the shared window over',
      async () => (await redis.exists(`${prefix}:app:burst`)) === 0,
      5000,
    );

    // All three take one event at a time until a whole round is refused.
    const started = Date.now();
    let granted = 0;
    for (let round = 0; round < 2000; round++) {
      const grants = await Promise.all(three.map((c) => c.spend(ask('burst', 1))));
      const n = grants.reduce((s, g) => s + g.granted, 0);
      granted += n;
      if (n === 0) break;
    }
    const seconds = (Date.now() - started) / 1000;
    // A new window plus every lease is admitted; beyond it, only the windows the loop ran into.
    expect(granted).toBeGreaterThanOrEqual(LIMIT + 3 * block);
    expect(granted).toBeLessThanOrEqual(LIMIT * Math.ceil(seconds) + 3 * block);
  });

  it('three collectors under 3 × the limit for 1.5 s admit at most limit × (⌈W⌉ + 1) + one lease each', async () => {
    const LIMIT = 200;
    const block = leaseBlock(LIMIT, LEASE_MS);
    const prefix = uniquePrefix('lease-flood');
    const three = [
      await collector({ prefix, limit: LIMIT }),
      await collector({ prefix, limit: LIMIT }),
      await collector({ prefix, limit: LIMIT }),
    ];
    const started = Date.now();
    const WINDOW_MS = 1500;
    const TICK_MS = 10;
    // Each collector is offered 2 events per 10 ms: 600/s in all, 3 × the limit.
    let granted = 0;
    for (let tick = 0; tick < WINDOW_MS / TICK_MS; tick++) {
      const due = started + tick * TICK_MS;
      // Pacing of an offered load, not a wait for a condition.
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      const grants = await Promise.all(three.map((c) => c.spend(ask('flood', 2))));
      granted += grants.reduce((s, g) => s + g.granted, 0);
    }
    const seconds = (Date.now() - started) / 1000;
    // The span touches at most ⌈W⌉ + 1 one-second windows of the shared budget.
    expect(granted).toBeLessThanOrEqual(LIMIT * (Math.ceil(seconds) + 1) + 3 * block);
    // And the limit is reached, not starved by leases held elsewhere.
    expect(granted).toBeGreaterThan(LIMIT * 1.5 * 0.8);
  });

  it('spends the lease locally: a thousand small requests cost a couple of Redis calls', async () => {
    const c = await collector({ prefix: uniquePrefix('lease-local'), limit: 1_000_000 });
    for (let k = 0; k < 1000; k++) expect((await c.spend(ask('busy', 10))).granted).toBe(10);
    expect(await count(c.metrics.leaseFetches, { trigger: 'short' })).toBe(1);
    expect(await count(c.metrics.leaseFetches)).toBeLessThanOrEqual(2);
  });

  it('fetches ahead once the lease runs down to half a block, one fetch at a time, never above a block', async () => {
    const clock = { now: () => 0 };
    const prefix = uniquePrefix('lease-ahead');
    const c = await collector({ prefix, limit: 1000, clock }); // block 100
    expect((await c.spend(ask('a', 60))).granted).toBe(60); // short: 60 + a block
    expect(await count(c.metrics.leaseTokens, { fate: 'leased' })).toBe(100);
    // 100 held: 55 leaves 45, at most half a block: one fetch ahead starts.
    const [first, second] = await Promise.all([c.spend(ask('a', 55)), c.spend(ask('a', 10))]);
    expect(first?.granted).toBe(55);
    expect(second?.granted).toBe(10);
    await waitFor(
      'the fetch ahead answered',
      async () => (await count(c.metrics.leaseTokens, { fate: 'leased' })) > 100,
      5000,
    );
    expect(await count(c.metrics.leaseFetches, { trigger: 'ahead' })).toBe(1);
    // It asked for 55 (to fill the lease to a block when it started): the lease holds 35 + 55 = 90.
    expect(await count(c.metrics.leaseTokens, { fate: 'leased' })).toBe(155);
    expect((await c.spend(ask('a', 90))).granted).toBe(90);
    expect(await count(c.metrics.leaseFetches, { trigger: 'short' })).toBe(1);
  });

  it('drops a lease one window after its last top-up', async () => {
    const clock = { t: 0, now: () => clock.t };
    const c = await collector({ prefix: uniquePrefix('lease-life'), limit: 1000, clock }); // block 100
    expect((await c.spend(ask('a', 10))).granted).toBe(10);
    clock.t += 1000;
    expect((await c.spend(ask('a', 10))).granted).toBe(10);
    expect(await count(c.metrics.leaseTokens, { fate: 'expired' })).toBe(100);
    expect(await count(c.metrics.leaseFetches, { trigger: 'short' })).toBe(2);
  });

  it('whole: a collector holding lease budget takes a request past it, leaving a debt in Redis', async () => {
    const prefix = uniquePrefix('lease-whole');
    const clock = { now: () => 0 };
    const [a, b] = [
      await collector({ prefix, limit: 100, clock }),
      await collector({ prefix, limit: 100, clock }),
    ];
    expect((await a.spend(ask('w', 1))).granted).toBe(1); // a holds a block of 10
    expect((await b.spend(ask('w', 200))).granted).toBeLessThanOrEqual(90); // b empties the bucket
    expect((await a.spend(ask('w', 50, 'whole'))).granted).toBe(50); // the budget was positive: a's lease
    const refused = await b.spend(ask('w', 1, 'whole'));
    expect(refused.granted).toBe(0);
    expect(refused.retryAfterMs).toBeGreaterThan(0);
    // a's debt (~40 at 100/s) blocks the app's key past its window.
    expect(await (await client()).pttl(`${prefix}:app:w`)).toBeGreaterThan(0);
  });

  it('a dead Redis: the lease is spent first, the insurance decides the rest at once', async () => {
    const server = await startPrivateRedis();
    let stopped = false;
    try {
      const prefix = uniquePrefix('lease-dead');
      const c = await collector({ prefix, limit: 1000, url: server.url, instances: 2 });
      expect((await c.spend(ask('d', 10))).granted).toBe(10); // a block of 100 leased
      await server.stop();
      stopped = true;
      await waitFor('the client sees Redis gone', () => c.redis.status !== 'ready', 5000);
      const started = Date.now();
      const fromLease = await c.spend(ask('d', 60));
      expect(fromLease).toEqual({ granted: 60, retryAfterMs: 0, store: 'redis' });
      // 40 left in the lease, then the insurance's 500 (1000 ÷ 2 instances) for the rest.
      const mixed = await c.spend(ask('d', 1000));
      expect(mixed.store).toBe('insurance');
      expect(mixed.granted).toBe(40 + 500);
      expect(mixed.retryAfterMs).toBeGreaterThan(0);
      expect(Date.now() - started).toBeLessThan(200);
      expect(await count(c.metrics.fallbackActive)).toBe(1);
    } finally {
      if (!stopped) await server.stop();
    }
  });
});
