import { loadConfig } from '../../../src/config/load';
import {
  creditLease,
  expireLease,
  leaseBlock,
  LEASE_TTL_MS,
  tokensToFetchAhead,
  type BudgetLease,
} from '../../../src/ratelimit/budget-lease';

const lease = (tokens: number, toppedUpAt = 0): BudgetLease => ({
  tokens,
  toppedUpAt,
  fetching: null,
  store: 'redis',
});

describe('budget lease', () => {
  it('a block is leaseMs of the limit, at least one event; 0 turns leasing off', () => {
    expect(leaseBlock(100, 100)).toBe(10);
    expect(leaseBlock(10_000_000, 100)).toBe(1_000_000);
    expect(leaseBlock(3, 100)).toBe(1);
    expect(leaseBlock(100, 1000)).toBe(100);
    expect(leaseBlock(100, 0)).toBe(0);
    expect(leaseBlock(0, 100)).toBe(0);
  });

  it('fetches ahead at half a block or when half a window old, to fill one block, never twice at once', () => {
    expect(tokensToFetchAhead(lease(60), 100, 0)).toBe(0);
    expect(tokensToFetchAhead(lease(50), 100, 0)).toBe(50);
    expect(tokensToFetchAhead(lease(0), 100, 0)).toBe(100);
    expect(tokensToFetchAhead(lease(90), 100, LEASE_TTL_MS / 2)).toBe(10);
    expect(tokensToFetchAhead({ ...lease(10), fetching: Promise.resolve() }, 100, 0)).toBe(0);
    expect(tokensToFetchAhead(lease(0), 0, 0)).toBe(0);
  });

  it('holds at most one block: what would go above it is handed back; it takes the store of its last top-up', () => {
    const l = lease(30);
    expect(creditLease(l, 50, 100, 'redis', 7)).toBe(0);
    expect(l).toMatchObject({ tokens: 80, toppedUpAt: 7, store: 'redis' });
    expect(creditLease(l, 50, 100, 'insurance', 9)).toBe(30);
    expect(l).toMatchObject({ tokens: 100, store: 'insurance' });
  });

  it('drops what it holds one window after its last top-up', () => {
    const l = lease(40, 1000);
    expect(expireLease(l, 1000 + LEASE_TTL_MS - 1)).toBe(0);
    expect(l.tokens).toBe(40);
    expect(expireLease(l, 1000 + LEASE_TTL_MS)).toBe(40);
    expect(l.tokens).toBe(0);
  });
});

describe('SLUICE_REDIS_LEASE_MS', () => {
  it('defaults to 100 ms of the limit and takes 0 (no lease) up to one second, with units', () => {
    expect(loadConfig({}).redisLeaseMs).toBe(100);
    expect(loadConfig({ SLUICE_REDIS_LEASE_MS: '0' }).redisLeaseMs).toBe(0);
    expect(loadConfig({ SLUICE_REDIS_LEASE_MS: '1s' }).redisLeaseMs).toBe(1000);
  });

  it.each(['-1', '2s', 'soon', '0.5'])('refuses %s, naming the variable and the range', (value) => {
    expect(() => loadConfig({ SLUICE_REDIS_LEASE_MS: value })).toThrow(
      /^SLUICE_REDIS_LEASE_MS=.*between 0 and 1s/,
    );
  });
});
