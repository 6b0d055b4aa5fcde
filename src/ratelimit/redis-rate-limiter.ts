import type { Redis } from 'ioredis';
import type { Clock } from '../clock';
import type { Logger } from '../log/logger';
import type { IntakeMetrics } from '../metrics/intake-instruments';
import { creditLease, expireLease, leaseBlock, tokensToFetchAhead, type BudgetLease } from './budget-lease';
import type { EventRateLimiter, LimitAsk, LimitGrant, LimitSubject, RateLimits } from './event-rate-limiter';
import { SharedBudget, type BudgetStore } from './shared-budget';

export interface RedisRateLimiterOptions {
  /** ioredis client made with `enableOfflineQueue: false` and a `commandTimeout`: a call fails fast, never queues. */
  readonly redis: Redis;
  readonly limits: RateLimits;
  /** Key prefix shared by the collectors that share limits. */
  readonly keyPrefix: string;
  /** Collectors sharing the limit; the insurance allows limit ÷ this per process. */
  readonly expectedInstances: number;
  /**
   * Budget leased from Redis in one block, as milliseconds of each app's limit (100: a tenth of the
   * limit, at least 1 event). 0: no lease, every decision is a Redis round trip.
   */
  readonly leaseMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: IntakeMetrics;
}

/** A lease with what names its budget and its limit. */
interface HeldLease extends BudgetLease {
  readonly key: string;
  readonly app: string;
}

/** An ask the lease could not cover: `reserved` is what the lease held, set aside for it. */
interface ShortAsk {
  readonly index: number;
  readonly ask: LimitAsk;
  readonly rate: number;
  readonly lease: HeldLease;
  reserved: number;
}

type FetchTrigger = 'short' | 'ahead';

/** Leases held before expired, idle ones are forgotten. */
const SWEEP_AT = 10_000;
/** Fetches under way that one request waits for before it fetches itself (each is one round trip). */
const MAX_WAITS = 2;

/**
 * Cluster-wide limits counted in Redis (shared-budget.ts: rate-limiter-flexible's
 * `RateLimiterRedis`, windows of `SLUICE_RATE_LIMIT_BURST` that hold that much of the limit),
 * spent from leases. Each collector takes budget from an
 * app's window in blocks (`leaseMs` of the limit) and spends it here with no round trip; it tops a
 * lease up in the background once it has run down to half a block (or is half a window old), one
 * fetch per key at a time. A request the lease cannot cover asks the shared budget for the rest
 * plus a new block, for every app of the request at once (the client pipelines the calls), so
 * partial admission, `whole` admission with a debt and Retry-After (the time until the window
 * ends) are decided by the shared budget.
 *
 * The bound: the shared budget admits at most `limit × B` per window of B seconds (the burst); in
 * any span of T seconds that is at most `limit × B × (⌈T / B⌉ + 1)` (a span can touch ⌈T / B⌉ + 1
 * windows: a burst at the end of one and the start of the next takes two windows at once); leases
 * add what they held at the span's start, at most one block per collector. So N collectors admit
 * at most `limit × B × (⌈T / B⌉ + 1) + N × block` (`whole` requests may add a debt of one request
 * each, which later windows repay). Unused lease tokens expire one window after the lease's last top-up
 * (budget-lease.ts).
 *
 * Redis trouble never fails or holds a request beyond the client's command timeout: what the
 * lease holds is spent first; for the rest the library's insurance limiter (limit ÷
 * `expectedInstances`, in memory) answers when Redis fails, times out or is not connected, and
 * the blocks it grants are leased like Redis's. Counting returns to Redis with the next call
 * Redis answers.
 */
export class RedisRateLimiter implements EventRateLimiter {
  private readonly budgets = new Map<number, SharedBudget>();
  private readonly leases = new Map<string, HeldLease>();
  /** The store that answered the last call to the shared budget. */
  private answering: BudgetStore = 'redis';

  constructor(private readonly o: RedisRateLimiterOptions) {
    o.metrics.fallbackActive.set(0);
  }

  /** `insurance` while the in-memory insurance limiter answers; else whether Redis is connected. */
  get health(): 'up' | 'down' | 'insurance' {
    if (this.answering !== 'redis') return 'insurance';
    return this.o.redis.status === 'ready' ? 'up' : 'down';
  }

  spend(asks: readonly LimitAsk[]): Promise<LimitGrant[]> {
    const now = this.o.clock.now();
    const grants: LimitGrant[] = new Array<LimitGrant>(asks.length);
    let short: ShortAsk[] | null = null;
    for (let index = 0; index < asks.length; index++) {
      const ask = asks[index] as LimitAsk;
      const rate = this.o.limits.limitFor(ask.subject.app);
      if (rate <= 0) {
        grants[index] = { granted: ask.events, retryAfterMs: 0, store: 'redis' };
        continue;
      }
      const lease = this.leaseFor(ask.subject, now);
      if (lease.tokens >= ask.events) {
        lease.tokens -= ask.events;
        grants[index] = { granted: ask.events, retryAfterMs: 0, store: lease.store };
        this.fetchAhead(lease, rate, now);
      } else {
        (short ??= []).push({ index, ask, rate, lease, reserved: 0 });
      }
    }
    return short === null ? Promise.resolve(grants) : this.spendShort(grants, short);
  }

  refund(subject: LimitSubject, events: number): void {
    const rate = this.o.limits.limitFor(subject.app);
    if (rate <= 0 || events <= 0) return;
    // Back into the lease up to one block (they expire with it); the rest back to the window.
    const lease = this.leases.get(subject.key);
    if (lease !== undefined) this.expire(lease, this.o.clock.now());
    const kept = lease === undefined ? 0 : Math.min(events, Math.max(0, this.blockFor(rate) - lease.tokens));
    if (lease !== undefined) lease.tokens += kept;
    this.budgetFor(rate).giveBack(subject.key, events - kept, this.answering);
  }

  /**
   * Forgets the leases. What they hold is not returned: a return that reaches Redis after its
   * window ended would add to the next one (the library's `reward` opens a window), and unused
   * lease budget is at most one block per app for the rest of one window.
   */
  async close(): Promise<void> {
    this.leases.clear();
    this.budgets.clear();
  }

  /** The asks the leases did not cover: wait for a fetch under way, else one call each, all at once. */
  private async spendShort(grants: LimitGrant[], short: ShortAsk[]): Promise<LimitGrant[]> {
    // A fetch under way for one of these keys may bring what the request needs: no second fetch
    // of the same lease at once.
    for (let round = 0; round < MAX_WAITS; round++) {
      const underWay = new Set<Promise<void>>();
      for (const s of short) if (s.lease.fetching !== null) underWay.add(s.lease.fetching);
      if (underWay.size === 0) break;
      await Promise.all(underWay);
      const now = this.o.clock.now();
      short = short.filter((s) => {
        this.expire(s.lease, now);
        if (s.lease.tokens < s.ask.events) return true;
        s.lease.tokens -= s.ask.events;
        grants[s.index] = { granted: s.ask.events, retryAfterMs: 0, store: s.lease.store };
        return false;
      });
      if (short.length === 0) return grants;
    }
    const now = this.o.clock.now();
    // What a lease holds goes to its request; the shared budget is asked for the rest only.
    for (const s of short) {
      this.expire(s.lease, now);
      s.reserved = s.lease.tokens;
      s.lease.tokens = 0;
    }
    const decided = short.map(async (s) => {
      grants[s.index] = await this.askShared(s);
    });
    // Leased tokens are credited before anyone waiting on `fetching` looks at the lease again.
    const settled = Promise.all(decided).then(() => undefined);
    for (const s of short) s.lease.fetching ??= settled;
    await settled;
    for (const s of short) if (s.lease.fetching === settled) s.lease.fetching = null;
    return grants;
  }

  /** One short ask: the shared budget decides what the reserved lease tokens do not cover. */
  private async askShared(s: ShortAsk): Promise<LimitGrant> {
    const { ask, rate, lease, reserved } = s;
    const budget = this.budgetFor(rate);
    const need = ask.events - reserved;
    this.o.metrics.leaseFetches.inc({ trigger: 'short' });
    if (ask.mode === 'whole') {
      const whole = await budget.spendWhole(ask.subject.key, need, reserved >= 1);
      this.answered(whole.store, 'short');
      if (whole.granted) return { granted: ask.events, retryAfterMs: 0, store: whole.store };
      lease.tokens += reserved;
      return { granted: 0, retryAfterMs: whole.waitMs, store: whole.store };
    }
    // A new block for the lease rides along; the library grants it only once the need is met.
    const spent = await budget.spend(ask.subject.key, need + this.blockFor(rate));
    this.answered(spent.store, 'short');
    const forRequest = Math.min(need, spent.got);
    this.credit(lease, rate, spent.got - forRequest, spent.store);
    const retryAfterMs = forRequest < need ? spent.waitMs : 0;
    return { granted: reserved + forRequest, retryAfterMs, store: spent.store };
  }

  /** Tops `lease` up in the background when it runs low or ages (tokensToFetchAhead). */
  private fetchAhead(lease: HeldLease, rate: number, now: number): void {
    const wanted = tokensToFetchAhead(lease, this.blockFor(rate), now);
    if (wanted <= 0) return;
    this.o.metrics.leaseFetches.inc({ trigger: 'ahead' });
    lease.fetching = this.budgetFor(rate)
      .spend(lease.key, wanted)
      .then(
        (spent) => {
          this.answered(spent.store, 'ahead');
          this.credit(lease, rate, spent.got, spent.store);
        },
        (err: unknown) => this.o.logger.warn({ err }, 'rate-limit lease top-up failed'),
      )
      .finally(() => {
        lease.fetching = null;
      });
  }

  private credit(lease: HeldLease, rate: number, tokens: number, store: BudgetStore): void {
    if (tokens <= 0) return;
    this.o.metrics.leaseTokens.inc({ fate: 'leased' }, tokens);
    const surplus = creditLease(lease, tokens, this.blockFor(rate), store, this.o.clock.now());
    if (surplus > 0) {
      this.budgetFor(rate).giveBack(lease.key, surplus, store);
      this.o.metrics.leaseTokens.inc({ fate: 'returned' }, surplus);
    }
  }

  /** Counts who answered a call to the shared budget, and logs a change of store once. */
  private answered(store: BudgetStore, trigger: FetchTrigger): void {
    if (store === 'insurance') {
      this.o.metrics.redisErrors.inc();
      this.o.metrics.leaseFetchFailures.inc({ trigger });
    }
    if (store === this.answering) return;
    this.answering = store;
    this.o.metrics.fallbackActive.set(store === 'insurance' ? 1 : 0);
    if (store === 'insurance')
      this.o.logger.warn('Redis rate limiter failed or is away; insurance limiter answers');
    else this.o.logger.info('Redis rate limiter answering again');
  }

  /** The shared budget of a limit (one `RateLimiterRedis` per distinct limit: the library's points are fixed). */
  private budgetFor(rate: number): SharedBudget {
    let budget = this.budgets.get(rate);
    if (budget === undefined) {
      budget = new SharedBudget({
        redis: this.o.redis,
        keyPrefix: this.o.keyPrefix,
        perSecond: rate,
        insurancePerSecond: Math.max(1, Math.floor(rate / this.o.expectedInstances)),
        windowSeconds: this.o.limits.burstSeconds,
      });
      this.budgets.set(rate, budget);
    }
    return budget;
  }

  /** The subject's lease (empty on first use), with tokens past their life dropped. */
  private leaseFor({ key, app }: LimitSubject, now: number): HeldLease {
    let lease = this.leases.get(key);
    if (lease === undefined) {
      if (this.leases.size >= SWEEP_AT) this.sweep(now);
      lease = { key, app, tokens: 0, toppedUpAt: now, fetching: null, store: 'redis' };
      this.leases.set(key, lease);
      return lease;
    }
    this.expire(lease, now);
    return lease;
  }

  private expire(lease: BudgetLease, now: number): void {
    const dropped = expireLease(lease, now);
    if (dropped > 0) this.o.metrics.leaseTokens.inc({ fate: 'expired' }, dropped);
  }

  private sweep(now: number): void {
    for (const [key, lease] of this.leases) {
      if (lease.fetching !== null) continue;
      this.expire(lease, now);
      if (lease.tokens === 0) this.leases.delete(key);
    }
  }

  private blockFor(rate: number): number {
    return leaseBlock(rate, this.o.leaseMs);
  }
}
