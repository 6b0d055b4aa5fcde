import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Clock } from '../clock';
import type { Logger } from '../log/logger';
import type { AdmissionMetrics } from '../metrics/admission-instruments';
import type { EventRateLimiter, LimitDecision, LimitSubject, RateLimits } from './event-rate-limiter';
import { MemoryRateLimiter } from './memory-rate-limiter';

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

/**
 * Cluster-wide limits counted in Redis. Redis trouble never fails or holds a
 * request: when the client is not connected, or a call errors or times out,
 * the in-memory insurance limiter decides at once, and Redis is tried again
 * after `retryMs` (so a frozen Redis costs one timeout per `retryMs`, not one
 * per request). Counting returns to Redis by itself when it answers again.
 */
export class RedisRateLimiter implements EventRateLimiter {
  private readonly byLimit = new Map<number, RateLimiterRedis>();
  private readonly insurance: MemoryRateLimiter;
  private redisBlockedUntil = 0;
  private onInsurance = false;

  constructor(private readonly o: RedisRateLimiterOptions) {
    this.insurance = new MemoryRateLimiter(o.limits, 'insurance', o.expectedInstances);
    o.metrics.fallbackActive.set(0);
  }

  async consume({ key, app }: LimitSubject, events: number): Promise<LimitDecision> {
    const limiter = this.limiterFor(app);
    if (limiter === null) return { allowed: true, retryAfterMs: 0, store: 'redis' };
    if (this.o.redis.status !== 'ready' || this.o.clock.now() < this.redisBlockedUntil) {
      return this.viaInsurance({ key, app }, events);
    }
    try {
      await limiter.consume(key, events);
      this.backOnRedis();
      return { allowed: true, retryAfterMs: 0, store: 'redis' };
    } catch (res) {
      if (res instanceof RateLimiterRes) {
        this.backOnRedis();
        limiter.reward(key, events).catch(() => undefined);
        return { allowed: false, retryAfterMs: res.msBeforeNext, store: 'redis' };
      }
      this.o.metrics.redisErrors.inc();
      this.redisBlockedUntil = this.o.clock.now() + this.o.retryMs;
      if (!this.onInsurance)
        this.o.logger.warn({ err: res }, 'Redis rate limiter failed; insurance limiter answers');
      return this.viaInsurance({ key, app }, events);
    }
  }

  refund({ key, app }: LimitSubject, events: number): void {
    if (this.onInsurance) {
      this.insurance.refund({ key, app }, events);
      return;
    }
    this.limiterFor(app)
      ?.reward(key, events)
      .catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.insurance.close();
  }

  private viaInsurance(subject: LimitSubject, events: number): Promise<LimitDecision> {
    if (!this.onInsurance) {
      this.onInsurance = true;
      this.o.metrics.fallbackActive.set(1);
    }
    return this.insurance.consume(subject, events);
  }

  private backOnRedis(): void {
    if (!this.onInsurance) return;
    this.onInsurance = false;
    this.o.metrics.fallbackActive.set(0);
    this.o.logger.info('Redis rate limiter answering again');
  }

  private limiterFor(app: string): RateLimiterRedis | null {
    const perSecond = this.o.limits.limitFor(app);
    if (perSecond <= 0) return null;
    let limiter = this.byLimit.get(perSecond);
    if (!limiter) {
      limiter = new RateLimiterRedis({
        storeClient: this.o.redis,
        keyPrefix: this.o.keyPrefix,
        points: perSecond,
        duration: 1,
        rejectIfRedisNotReady: true,
      });
      this.byLimit.set(perSecond, limiter);
    }
    return limiter;
  }
}
