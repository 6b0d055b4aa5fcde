import { Redis } from 'ioredis';
import { SharedBudget } from '../../src/ratelimit/shared-budget';
import { waitFor } from '../support/http';
import { redisUrl, uniquePrefix } from '../support/redis';

/**
 * Events handed back to a shared budget's window (the part of a take the window could not grant,
 * a lease's surplus) against a real Redis: they serve the window they came from while it lasts,
 * and never the next one, however late the return arrives.
 */
describe('SharedBudget returns (real Redis)', () => {
  let redis: Redis;

  beforeAll(async () => {
    redis = new Redis(redisUrl(), {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: 500,
    });
    redis.on('error', () => undefined);
    await new Promise((r) => redis.once('ready', r));
  });

  afterAll(() => redis?.disconnect());

  const budgetOf = (prefix: string) =>
    new SharedBudget({ redis, keyPrefix: prefix, perSecond: 10, insurancePerSecond: 10, windowSeconds: 1 });

  /** Waits until Redis holds what the return wrote. */
  const settled = (key: string, value: string) =>
    waitFor(`${key} to be ${value}`, async () => (await redis.get(key)) === value, 5000);

  it('a return while the window lasts is spent again in that window (by another collector)', async () => {
    const prefix = uniquePrefix('budget-live');
    const budget = budgetOf(prefix);
    // This process refuses a key it spent without a round trip until the window ends (the class
    // comment): what it returns serves the other collectors first.
    const other = budgetOf(prefix);
    expect(await budget.spend('app:a', 10)).toMatchObject({ got: 10, store: 'redis' });
    budget.giveBack('app:a', 4, 'redis');
    await settled(`${prefix}:app:a`, '6');
    expect((await other.spend('app:a', 5)).got).toBe(4);
  });

  it('a return after its window ended adds nothing to the next window', async () => {
    const prefix = uniquePrefix('budget-late');
    const budget = budgetOf(prefix);
    expect(await budget.spend('app:b', 10)).toMatchObject({ got: 10, store: 'redis' });
    await waitFor('the window over', async () => (await redis.exists(`${prefix}:app:b`)) === 0, 5000);
    budget.giveBack('app:b', 5, 'redis');
    // Commands on one connection run in order: once this answers, the return has been handled.
    await redis.ping();
    expect(await redis.get(`${prefix}:app:b`)).toBeNull();
    expect((await budgetOf(prefix).spend('app:b', 15)).got).toBe(10);
  });

  it('a window of the burst allowance holds that many seconds of the limit, and no more', async () => {
    const prefix = uniquePrefix('budget-burst');
    const budget = new SharedBudget({
      redis,
      keyPrefix: prefix,
      perSecond: 10,
      insurancePerSecond: 10,
      windowSeconds: 5,
    });
    expect(await budget.spend('app:c', 30)).toMatchObject({ got: 30, store: 'redis' });
    const rest = await budget.spend('app:c', 40);
    expect(rest.got).toBe(20);
    expect(rest.waitMs).toBeGreaterThan(4000);
    expect(rest.waitMs).toBeLessThanOrEqual(5000);
    expect((await budget.spend('app:c', 1)).got).toBe(0);
  });
});
