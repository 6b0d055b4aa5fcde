import type { Redis } from 'ioredis';
import type { Clock } from '../clock';
import type { Logger } from '../log/logger';
import type { AdmissionMetrics } from '../metrics/admission-instruments';
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
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: AdmissionMetrics;
}

/** The scripts, registered on the client (ioredis sends EVALSHA, and the script itself once if Redis lacks it). */
interface ScriptedRedis {
  sluiceTakeBuckets(keys: number, ...keysAndArgs: Array<string | number>): Promise<number[]>;
  sluiceRefundBucket(key: string, rate: number, events: number): Promise<number>;
}

/**
 * Cluster-wide limits counted in Redis: one script call decides every app of a request
 * (redis-take-script.ts). Redis trouble never fails or holds a request: when the client is not
 * connected, or a call errors or times out, the in-memory insurance limiter decides at once, and
 * Redis is tried again after `retryMs` (so a frozen Redis costs one timeout per `retryMs`, not one
 * per request). Counting returns to Redis by itself when it answers again.
 */
export class RedisRateLimiter implements EventRateLimiter {
  private readonly insurance: MemoryRateLimiter;
  private readonly scripted: ScriptedRedis;
  private redisBlockedUntil = 0;
  private onInsurance = false;

  constructor(private readonly o: RedisRateLimiterOptions) {
    this.insurance = new MemoryRateLimiter(o.limits, o.clock, 'insurance', o.expectedInstances);
    o.redis.defineCommand('sluiceTakeBuckets', { lua: REDIS_TAKE_SCRIPT });
    o.redis.defineCommand('sluiceRefundBucket', { numberOfKeys: 1, lua: REDIS_REFUND_SCRIPT });
    this.scripted = o.redis as unknown as ScriptedRedis;
    o.metrics.fallbackActive.set(0);
  }

  async take(asks: readonly LimitAsk[]): Promise<LimitGrant[]> {
    const rates = asks.map((a) => this.o.limits.limitFor(a.subject.app));
    const limited = asks.flatMap((a, i) => ((rates[i] ?? 0) > 0 ? [{ ask: a, rate: rates[i] ?? 0 }] : []));
    if (limited.length === 0)
      return asks.map((a) => ({ granted: a.events, retryAfterMs: 0, store: 'redis' }));
    if (this.o.redis.status !== 'ready' || this.o.clock.now() < this.redisBlockedUntil) {
      return this.viaInsurance(asks);
    }
    const keys = limited.map(({ ask }) => this.o.keyPrefix + ask.subject.key);
    const args = limited.flatMap(({ ask, rate }) => [rate, ask.events, ask.mode === 'whole' ? 1 : 0]);
    let answer: number[];
    try {
      answer = await this.scripted.sluiceTakeBuckets(keys.length, ...keys, ...args);
    } catch (err) {
      this.o.metrics.redisErrors.inc();
      this.redisBlockedUntil = this.o.clock.now() + this.o.retryMs;
      if (!this.onInsurance)
        this.o.logger.warn({ err }, 'Redis rate limiter failed; insurance limiter answers');
      return this.viaInsurance(asks);
    }
    this.backOnRedis();
    let k = 0;
    return asks.map((a, i) => {
      if ((rates[i] ?? 0) <= 0) return { granted: a.events, retryAfterMs: 0, store: 'redis' };
      const granted = Number(answer[2 * k] ?? 0);
      const retryAfterMs = Number(answer[2 * k + 1] ?? 0);
      k++;
      return { granted, retryAfterMs, store: 'redis' };
    });
  }

  refund(subject: LimitSubject, events: number): void {
    if (this.onInsurance) {
      this.insurance.refund(subject, events);
      return;
    }
    const rate = this.o.limits.limitFor(subject.app);
    if (rate <= 0) return;
    this.scripted.sluiceRefundBucket(this.o.keyPrefix + subject.key, rate, events).catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.insurance.close();
  }

  private viaInsurance(asks: readonly LimitAsk[]): LimitGrant[] {
    if (!this.onInsurance) {
      this.onInsurance = true;
      this.o.metrics.fallbackActive.set(1);
    }
    return this.insurance.takeNow(asks);
  }

  private backOnRedis(): void {
    if (!this.onInsurance) return;
    this.onInsurance = false;
    this.o.metrics.fallbackActive.set(0);
    this.o.logger.info('Redis rate limiter answering again');
  }
}
