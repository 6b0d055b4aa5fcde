import type { BudgetStore } from './shared-budget';

/**
 * A collector's lease on one key's shared budget (redis-rate-limiter.ts): tokens already spent from
 * the key's window in Redis (or from the insurance while Redis is away), spent here without a round
 * trip. Invariant: a lease holds at most one block (`leaseBlock`); what would go above it is given
 * back.
 */
export interface BudgetLease {
  /** Tokens this collector may spend without asking Redis (whole events, ≥ 0). */
  tokens: number;
  /** When tokens were last added to it (milliseconds, the limiter's clock). */
  toppedUpAt: number;
  /** The one call to the shared budget under way for this key, if any (it never rejects). */
  fetching: Promise<void> | null;
  /** Where its tokens came from (the last top-up's store): the label of the grants it makes. */
  store: BudgetStore;
}

/**
 * How long leased tokens stay spendable after the lease's last top-up (milliseconds), whatever the
 * shared budget's window: a lease is a tenth of a second of the limit, spent within a second or
 * dropped. Dropped tokens are not returned: the window they came from may have ended, and a return
 * would add to the next one.
 */
export const LEASE_TTL_MS = 1000;

/** A lease this old is topped up in the background even while it holds half a block or more. */
export const LEASE_RENEW_AFTER_MS = LEASE_TTL_MS / 2;

/**
 * Tokens in one block for a key whose limit is `rate` events per second: `leaseMs` of the limit,
 * at least 1 (an app limited to less than one event per block still leases one). 0: no lease.
 */
export function leaseBlock(rate: number, leaseMs: number): number {
  if (leaseMs <= 0 || rate <= 0) return 0;
  return Math.max(1, Math.floor((rate * leaseMs) / 1000));
}

/** Drops what a lease holds once it is `LEASE_TTL_MS` old; returns the tokens dropped. */
export function expireLease(lease: BudgetLease, now: number): number {
  if (lease.tokens === 0 || now - lease.toppedUpAt < LEASE_TTL_MS) return 0;
  const dropped = lease.tokens;
  lease.tokens = 0;
  return dropped;
}

/**
 * Tokens to fetch ahead for `lease` now, or 0: when it has run down to half a block or less, or is
 * past half its life, and no fetch is under way, enough to fill it to one block.
 */
export function tokensToFetchAhead(lease: BudgetLease, block: number, now: number): number {
  if (block === 0 || lease.fetching !== null) return 0;
  const low = lease.tokens * 2 <= block;
  const ageing = lease.tokens > 0 && now - lease.toppedUpAt >= LEASE_RENEW_AFTER_MS;
  return low || ageing ? block - lease.tokens : 0;
}

/**
 * Adds `tokens` from `store` to `lease` (refreshing its life when any came); returns what would
 * lift it above one block, for the caller to give back.
 */
export function creditLease(
  lease: BudgetLease,
  tokens: number,
  block: number,
  store: BudgetStore,
  now: number,
): number {
  if (tokens <= 0) return 0;
  lease.toppedUpAt = now;
  lease.store = store;
  const kept = Math.min(tokens, Math.max(0, block - lease.tokens));
  lease.tokens += kept;
  return tokens - kept;
}
