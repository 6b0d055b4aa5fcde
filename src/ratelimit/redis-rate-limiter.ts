import type { Redis } from 'ioredis';
import type { Clock } from '../clock';
import type { Logger } from '../log/logger';
import type { AdmissionMetrics } from '../metrics/admission-instruments';
import {
  creditLease,
  expireLease,
  leaseBlock,
  LEASE_TTL_MS,
  tokensToFetchAhead,
  type BudgetLease,
} from './budget-lease';
import type { EventRateLimiter, LimitAsk, LimitGrant, LimitSubject, RateLimits } from './event-rate-limiter';
import { MemoryRateLimiter } from './memory-rate-limiter';
import { REDIS_REFUND_SCRIPT, REDIS_TAKE_SCRIPT } from './redis-take-script';

export interface RedisRateLimiterOptions {
  /** ioredis client made with `enableOfflineQueue: false` and a `commandTimeout`: a call fails fast, never queues. */
  readonly redis: Redis;
  readonly limits: RateLimits;
  /** Key prefix shared by the collectors that share limits. */
  readonly keyPrefix: string;
  /** Collectors sharing the limit; the insurance allows limit ÷ this per process. */
  readonly expectedInstances: number;
  /** After a Redis failure, stay on insurance this long before trying Redis again (milliseconds). */
  readonly retryMs: number;
  /**
   * Budget leased from Redis in one block, as milliseconds of each app's limit (100: a tenth of the
   * limit, at least 1 event). 0: no lease, every decision is a Redis round trip.
   */
  readonly leaseMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: AdmissionMetrics;
}

/** The scripts, registered on the client (ioredis sends EVALSHA, and the script itself once if Redis lacks it). */
interface ScriptedRedis {
  sluiceTakeBuckets(keys: number, ...keysAndArgs: Array<string | number>): Promise<number[]>;
  sluiceRefundBucket(key: string, rate: number, events: number): Promise<number>;
}

/** One subject's part of a script call (redis-take-script.ts). */
interface ScriptAsk {
  readonly key: string;
  readonly rate: number;
  readonly need: number;
  readonly extra: number;
  readonly mode: 0 | 1 | 2;
}

/** A lease with what names its bucket and its limit. */
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
 * Cluster-wide limits counted in Redis, spent from leases. Each collector takes budget from an app's
 * shared bucket in blocks (`leaseMs` of the limit; one script call, redis-take-script.ts) and
 * spends it here with no round trip; it tops a lease up in the background once it has run down to
 * half a block (or is half a window old), one fetch per key at a time. A request the lease cannot
 * cover asks Redis for the rest plus a new block in one call for every app of the request, so
 * partial admission, `whole` admission with a debt and Retry-After are decided by the shared bucket
 * as before (Retry-After: the time until the shared bucket holds the rest).
 *
 * The bound: the shared bucket admits at most `limit × W + limit` in any window of W seconds (it
 * starts full); leases add what they held at the window's start, at most one block per collector.
 * So N collectors admit at most `limit × (W + 1) + N × block` (`whole` requests may add a debt of
 * one request each, which later windows repay). Unused lease tokens expire one window after the
 * lease's last top-up (budget-lease.ts); on `close` they are returned to Redis.
 *
 * Redis trouble never fails or holds a request: what the lease holds is spent first; for the rest,
 * when the client is not connected, or a call errors or times out, the in-memory insurance limiter
 * decides at once, and Redis is tried again after `retryMs` (so a frozen Redis costs one timeout
 * per `retryMs`, not one per request). Counting returns to Redis by itself when it answers again.
 */
export class RedisRateLimiter implements EventRateLimiter {
  private readonly insurance: MemoryRateLimiter;
  private readonly scripted: ScriptedRedis;
  private readonly leases = new Map<string, HeldLease>();
  private redisBlockedUntil = 0;
  private onInsurance = false;
  private redisDown = false;

  constructor(private readonly o: RedisRateLimiterOptions) {
    this.insurance = new MemoryRateLimiter(o.limits, o.clock, 'insurance', o.expectedInstances);
    o.redis.defineCommand('sluiceTakeBuckets', { lua: REDIS_TAKE_SCRIPT });
    o.redis.defineCommand('sluiceRefundBucket', { numberOfKeys: 1, lua: REDIS_REFUND_SCRIPT });
    this.scripted = o.redis as unknown as ScriptedRedis;
    o.metrics.fallbackActive.set(0);
  }

  /** `insurance` while the in-memory insurance limiter answers; else whether Redis is connected. */
  get health(): 'up' | 'down' | 'insurance' {
    if (this.onInsurance) return 'insurance';
    return this.o.redis.status === 'ready' ? 'up' : 'down';
  }

  take(asks: readonly LimitAsk[]): Promise<LimitGrant[]> {
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
        grants[index] = { granted: ask.events, retryAfterMs: 0, store: 'redis' };
        this.fetchAhead(lease, rate, now);
      } else {
        (short ??= []).push({ index, ask, rate, lease, reserved: 0 });
      }
    }
    return short === null ? Promise.resolve(grants) : this.takeShort(grants, short);
  }

  refund(subject: LimitSubject, events: number): void {
    if (this.onInsurance) {
      this.insurance.refund(subject, events);
      return;
    }
    const rate = this.o.limits.limitFor(subject.app);
    if (rate <= 0 || events <= 0) return;
    // Back into the lease up to one block (they expire with it); the rest back to Redis.
    const lease = this.leases.get(subject.key);
    if (lease !== undefined) this.expire(lease, this.o.clock.now());
    const kept = lease === undefined ? 0 : Math.min(events, Math.max(0, this.blockFor(rate) - lease.tokens));
    if (lease !== undefined) lease.tokens += kept;
    if (events > kept) void this.giveBack(subject.key, rate, events - kept);
  }

  /** Returns what the leases hold to Redis (bounded by the client's command timeout). */
  async close(): Promise<void> {
    const now = this.o.clock.now();
    const returns: Promise<void>[] = [];
    if (this.o.redis.status === 'ready') {
      for (const lease of this.leases.values()) {
        const rate = this.o.limits.limitFor(lease.app);
        if (lease.tokens > 0 && now - lease.toppedUpAt < LEASE_TTL_MS && rate > 0) {
          returns.push(this.giveBack(lease.key, rate, lease.tokens));
        }
        lease.tokens = 0;
      }
    }
    await Promise.all(returns);
    this.leases.clear();
    await this.insurance.close();
  }

  /** The asks the leases did not cover: wait for a fetch under way, else one script call for all. */
  private async takeShort(grants: LimitGrant[], short: ShortAsk[]): Promise<LimitGrant[]> {
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
        grants[s.index] = { granted: s.ask.events, retryAfterMs: 0, store: 'redis' };
        return false;
      });
      if (short.length === 0) return grants;
    }
    const now = this.o.clock.now();
    // What a lease holds goes to its request; Redis is asked for the rest only.
    for (const s of short) {
      this.expire(s.lease, now);
      s.reserved = s.lease.tokens;
      s.lease.tokens = 0;
    }
    if (!this.redisUsable(now)) return this.viaInsurance(grants, short);
    const call = this.callScript(
      short.map((s) => ({
        key: s.ask.subject.key,
        rate: s.rate,
        need: s.ask.events - s.reserved,
        extra: this.blockFor(s.rate),
        mode: s.ask.mode === 'partial' ? 0 : s.reserved >= 1 ? 2 : 1,
      })),
      'short',
    );
    // Leased tokens are credited before anyone waiting on `fetching` looks at the lease again.
    const credited = call.then((answer) => {
      const at = this.o.clock.now();
      if (answer !== null) {
        short.forEach((s, k) => this.credit(s.lease, s.rate, Number(answer[3 * k + 1] ?? 0), at));
      }
      return answer;
    });
    const settled = credited.then(() => undefined);
    for (const s of short) s.lease.fetching ??= settled;
    const answer = await credited;
    for (const s of short) if (s.lease.fetching === settled) s.lease.fetching = null;
    if (answer === null) return this.viaInsurance(grants, short);
    short.forEach((s, k) => {
      const got = Number(answer[3 * k] ?? 0);
      const waitMs = Number(answer[3 * k + 2] ?? 0);
      if (s.ask.mode === 'whole' && got < s.ask.events - s.reserved) {
        s.lease.tokens += s.reserved;
        grants[s.index] = { granted: 0, retryAfterMs: waitMs, store: 'redis' };
        return;
      }
      grants[s.index] = { granted: s.reserved + got, retryAfterMs: waitMs, store: 'redis' };
    });
    return grants;
  }

  /** The insurance decides what the reserved lease tokens do not cover. */
  private viaInsurance(grants: LimitGrant[], short: readonly ShortAsk[]): LimitGrant[] {
    if (!this.onInsurance) {
      this.onInsurance = true;
      this.o.metrics.fallbackActive.set(1);
    }
    const decided = this.insurance.takeNow(
      short.map((s) => ({ subject: s.ask.subject, events: s.ask.events - s.reserved, mode: s.ask.mode })),
    );
    short.forEach((s, k) => {
      const g = decided[k] as LimitGrant;
      if (s.ask.mode === 'whole' && g.granted === 0) {
        s.lease.tokens += s.reserved;
        grants[s.index] = g;
        return;
      }
      grants[s.index] = { granted: s.reserved + g.granted, retryAfterMs: g.retryAfterMs, store: 'insurance' };
    });
    return grants;
  }

  /** Tops `lease` up in the background when it runs low or ages (tokensToFetchAhead). */
  private fetchAhead(lease: HeldLease, rate: number, now: number): void {
    const block = this.blockFor(rate);
    const wanted = tokensToFetchAhead(lease, block, now);
    if (wanted <= 0 || !this.redisUsable(now)) return;
    lease.fetching = this.callScript(
      [{ key: lease.key, rate, need: 0, extra: wanted, mode: 0 }],
      'ahead',
    ).then((answer) => {
      lease.fetching = null;
      if (answer !== null) this.credit(lease, rate, Number(answer[1] ?? 0), this.o.clock.now());
    });
  }

  private credit(lease: HeldLease, rate: number, tokens: number, now: number): void {
    if (tokens <= 0) return;
    this.o.metrics.leaseTokens.inc({ fate: 'leased' }, tokens);
    const surplus = creditLease(lease, tokens, this.blockFor(rate), now);
    if (surplus > 0) void this.giveBack(lease.key, rate, surplus);
  }

  /** One script call; null when Redis failed (counted, logged once, Redis then rested for `retryMs`). */
  private async callScript(asks: readonly ScriptAsk[], trigger: FetchTrigger): Promise<number[] | null> {
    this.o.metrics.leaseFetches.inc({ trigger });
    const keys = asks.map((a) => this.o.keyPrefix + a.key);
    const args = asks.flatMap((a) => [a.rate, a.need, a.extra, a.mode]);
    try {
      const answer = await this.scripted.sluiceTakeBuckets(keys.length, ...keys, ...args);
      this.backOnRedis();
      return answer;
    } catch (err) {
      this.o.metrics.redisErrors.inc();
      this.o.metrics.leaseFetchFailures.inc({ trigger });
      this.redisBlockedUntil = this.o.clock.now() + this.o.retryMs;
      if (!this.redisDown) {
        this.redisDown = true;
        this.o.logger.warn({ err }, 'Redis rate limiter failed; insurance limiter answers');
      }
      return null;
    }
  }

  /** Gives tokens back to the shared bucket; fire and forget (a lost return is budget unused, not excess). */
  private async giveBack(key: string, rate: number, tokens: number): Promise<void> {
    try {
      await this.scripted.sluiceRefundBucket(this.o.keyPrefix + key, rate, tokens);
      this.o.metrics.leaseTokens.inc({ fate: 'returned' }, tokens);
    } catch {
      // Redis away: the tokens are not returned; the bucket refills within a window anyway.
    }
  }

  /** The subject's lease (empty on first use), with tokens past their life dropped. */
  private leaseFor({ key, app }: LimitSubject, now: number): HeldLease {
    let lease = this.leases.get(key);
    if (lease === undefined) {
      if (this.leases.size >= SWEEP_AT) this.sweep(now);
      lease = { key, app, tokens: 0, toppedUpAt: now, fetching: null };
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

  private redisUsable(now: number): boolean {
    return this.o.redis.status === 'ready' && now >= this.redisBlockedUntil;
  }

  private backOnRedis(): void {
    if (this.onInsurance) {
      this.onInsurance = false;
      this.o.metrics.fallbackActive.set(0);
    }
    if (this.redisDown) {
      this.redisDown = false;
      this.o.logger.info('Redis rate limiter answering again');
    }
  }
}
