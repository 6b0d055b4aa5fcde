import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type {
  EventRateLimiter,
  LimitDecision,
  LimitSubject,
  LimiterStore,
  RateLimits,
} from './event-rate-limiter';

const WINDOW_S = 1;

/**
 * Limits counted in this process (tiers 1–2, and the insurance of the Redis
 * limiter). `divisor` splits each limit across that many instances.
 */
export class MemoryRateLimiter implements EventRateLimiter {
  private readonly byLimit = new Map<number, RateLimiterMemory>();

  constructor(
    private readonly limits: RateLimits,
    private readonly store: LimiterStore = 'memory',
    private readonly divisor = 1,
  ) {}

  async consume({ key, app }: LimitSubject, events: number): Promise<LimitDecision> {
    const limiter = this.limiterFor(app);
    if (limiter === null) return { allowed: true, retryAfterMs: 0, store: this.store };
    try {
      await limiter.consume(key, events);
      return { allowed: true, retryAfterMs: 0, store: this.store };
    } catch (res) {
      if (!(res instanceof RateLimiterRes)) throw res;
      void limiter.reward(key, events);
      return { allowed: false, retryAfterMs: res.msBeforeNext, store: this.store };
    }
  }

  refund({ key, app }: LimitSubject, events: number): void {
    void this.limiterFor(app)?.reward(key, events);
  }

  async close(): Promise<void> {}

  private limiterFor(app: string): RateLimiterMemory | null {
    const perSecond = this.limits.limitFor(app);
    if (perSecond <= 0) return null;
    const points = Math.max(1, Math.ceil(perSecond / this.divisor));
    let limiter = this.byLimit.get(points);
    if (!limiter) {
      limiter = new RateLimiterMemory({ points, duration: WINDOW_S });
      this.byLimit.set(points, limiter);
    }
    return limiter;
  }
}
