import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

/** Which store answered a call: Redis, or the in-memory insurance while Redis failed or was not ready. */
export type BudgetStore = 'redis' | 'insurance';

export interface BudgetSpend {
  /** Events spent, 0..asked. */
  readonly got: number;
  /** When fewer than asked: milliseconds until the window that refused them ends (a new one holds the limit). */
  readonly waitMs: number;
  readonly store: BudgetStore;
}

export interface WholeSpend {
  readonly granted: boolean;
  /** When refused: milliseconds until the app's budget is positive again. */
  readonly waitMs: number;
  readonly store: BudgetStore;
}

/** Answers the insurance gave: `RateLimiterRedis` resolves (and rejects) with them as with its own. */
const fromInsurance = new WeakSet<object>();

function marked(answer: Promise<RateLimiterRes>): Promise<RateLimiterRes> {
  return answer.then(
    (res) => {
      fromInsurance.add(res);
      return res;
    },
    (res: unknown) => {
      if (typeof res === 'object' && res !== null) fromInsurance.add(res);
      throw res;
    },
  );
}

/** The insurance limiter, whose answers are marked so a caller can count and label them. */
class InsuranceLimiter extends RateLimiterMemory {
  override consume(key: string | number, points?: number, options?: object): Promise<RateLimiterRes> {
    return marked(super.consume(key, points, options));
  }

  override penalty(key: string | number, points?: number, options?: object): Promise<RateLimiterRes> {
    return marked(super.penalty(key, points, options));
  }
}

export interface SharedBudgetOptions {
  /** ioredis client made with `enableOfflineQueue: false` and a `commandTimeout`: a call fails fast, never queues. */
  readonly redis: Redis;
  /** Prefix of the budget keys (rate-limiter-flexible adds `:` and the key). */
  readonly keyPrefix: string;
  /** The limit (events per second), cluster-wide. */
  readonly perSecond: number;
  /** The limit while the insurance answers (events per second): the limit ÷ the collectors expected to share it. */
  readonly insurancePerSecond: number;
  /** Length of a window (whole seconds): `SLUICE_RATE_LIMIT_BURST`. A window holds this many seconds of the limit. */
  readonly windowSeconds: number;
}

/**
 * A return to a window, only while it lasts: `reward` on a window whose key has expired would
 * create the next window's key already owing the returned events, and that window would admit
 * them again. Returns the count left, or nil when the window was gone.
 */
const RETURN_TO_LIVE_WINDOW = `if redis.call('exists', KEYS[1]) == 1 then
  return redis.call('decrby', KEYS[1], ARGV[1])
end
return nil`;

/**
 * One limit's shared budget: rate-limiter-flexible's `RateLimiterRedis`, a counter per key in
 * fixed windows of `SLUICE_RATE_LIMIT_BURST` holding that much of the limit (its Lua script:
 * `INCRBY` and the window's `PTTL` in one call), so a client may send a flush of several seconds
 * at once; with a `RateLimiterMemory` of the same window as its `insuranceLimiter`. The library sends a call to the insurance when
 * Redis fails, times out (the client's `commandTimeout`) or is not connected
 * (`rejectIfRedisNotReady`), so no call waits longer than the command timeout.
 *
 * What the library does not do is decided here: a take over the window's remainder is granted in
 * part, `points − (consumedPoints − asked)`, and the rest handed back (the library counts a
 * refused consume in full); a `whole` take leaves a debt that `block` carries past the window for
 * as long as the limit needs to repay it. Returns and blocks go to the store that granted; one
 * granted by Redis never falls back to the insurance, so a failed one is lost (budget unused until
 * the window ends). A return goes only to a window that still lasts (`RETURN_TO_LIVE_WINDOW`).
 *
 * `inMemoryBlockOnConsumed` is the limit: once a window is spent, this process refuses its key
 * without a round trip until the window ends (the library then rejects with `consumedPoints` 0:
 * nothing was counted), so an app in a loop costs Redis one call per window and collector. The
 * price: budget handed back to a spent window (a refund after a full lane) serves the other
 * collectors at once and this one from the next window. `execEvenly` stays off: it delays
 * answers, and no request may wait here.
 */
export class SharedBudget {
  readonly perSecond: number;
  private readonly insurancePerSecond: number;
  private readonly redis: Redis;
  private readonly insured: RateLimiterRedis;
  private readonly direct: RateLimiterRedis;
  private readonly insurance: InsuranceLimiter;

  constructor(o: SharedBudgetOptions) {
    this.perSecond = o.perSecond;
    this.insurancePerSecond = o.insurancePerSecond;
    this.redis = o.redis;
    this.insurance = new InsuranceLimiter({
      points: o.insurancePerSecond * o.windowSeconds,
      duration: o.windowSeconds,
      keyPrefix: o.keyPrefix,
    });
    const points = o.perSecond * o.windowSeconds;
    const redisOptions = {
      storeClient: o.redis,
      points,
      duration: o.windowSeconds,
      keyPrefix: o.keyPrefix,
      rejectIfRedisNotReady: true,
    };
    this.insured = new RateLimiterRedis({
      ...redisOptions,
      inMemoryBlockOnConsumed: points,
      insuranceLimiter: this.insurance,
    });
    this.direct = new RateLimiterRedis(redisOptions);
  }

  /** Takes up to `asked` events from `key`'s window; what the window cannot grant is handed back. */
  async spend(key: string, asked: number): Promise<BudgetSpend> {
    const { res, refused } = await answer(this.insured.consume(key, asked));
    const store = storeOf(res);
    const points = this.pointsOf(store);
    if (!refused) return { got: asked, waitMs: 0, store };
    // A refusal counts what it asked for, so it always leaves more than the limit counted; one
    // that does not is the in-process block (see the class comment): nothing to hand back.
    if (res.consumedPoints <= points) return { got: 0, waitMs: res.msBeforeNext, store };
    const got = Math.max(0, Math.min(asked, points - (res.consumedPoints - asked)));
    this.giveBack(key, asked - got, store);
    return { got, waitMs: res.msBeforeNext, store };
  }

  /**
   * Takes `events` whole while `key`'s window is not spent, or in any case when `forced` (the
   * caller held budget already, so the budget was positive). A take past the window's limit leaves
   * a debt: the key is blocked until the limit has repaid it (whole seconds, rounded up, as `block`
   * sets them). Refused, nothing is spent.
   */
  async spendWhole(key: string, events: number, forced: boolean): Promise<WholeSpend> {
    const call = forced ? this.insured.penalty(key, events) : this.insured.consume(key, events);
    const { res, refused } = await answer(call);
    const store = storeOf(res);
    const points = this.pointsOf(store);
    const spentBefore = res.consumedPoints - events >= points;
    if (refused && (res.consumedPoints <= points || spentBefore)) {
      if (res.consumedPoints > points) this.giveBack(key, events, store);
      return { granted: false, waitMs: res.msBeforeNext, store };
    }
    const debt = res.consumedPoints - points;
    if (debt > 0) {
      const perSecond = store === 'insurance' ? this.insurancePerSecond : this.perSecond;
      const seconds = Math.ceil((Math.max(0, res.msBeforeNext) + (debt * 1000) / perSecond) / 1000);
      const blocked =
        store === 'insurance' ? this.insurance.block(key, seconds) : this.direct.block(key, seconds);
      // Redis away: the debt is not carried; the window still ends spent.
      blocked.catch(() => undefined);
    }
    return { granted: true, waitMs: 0, store };
  }

  /**
   * Hands `events` back to `key`'s window in `store` while that window lasts; fire and forget. A
   * return that fails or comes after the window ended is budget unused, never excess in the next.
   */
  giveBack(key: string, events: number, store: BudgetStore): void {
    if (events <= 0) return;
    const given =
      store === 'insurance'
        ? this.insurance.get(key).then((res) => (res === null ? null : this.insurance.reward(key, events)))
        : this.redis.eval(RETURN_TO_LIVE_WINDOW, 1, this.direct.getKey(key), events);
    given.catch(() => undefined);
  }

  /** Events one window holds in `store`. */
  private pointsOf(store: BudgetStore): number {
    return store === 'insurance' ? this.insurance.points : this.direct.points;
  }
}

/** The library's answer and whether it refused (a refusal rejects with a `RateLimiterRes`). */
async function answer(call: Promise<RateLimiterRes>): Promise<{ res: RateLimiterRes; refused: boolean }> {
  try {
    return { res: await call, refused: false };
  } catch (err) {
    // With an insurance limiter, nothing else rejects: a Redis error goes to the insurance.
    if (err instanceof RateLimiterRes) return { res: err, refused: true };
    throw err;
  }
}

function storeOf(res: RateLimiterRes): BudgetStore {
  return fromInsurance.has(res) ? 'insurance' : 'redis';
}
