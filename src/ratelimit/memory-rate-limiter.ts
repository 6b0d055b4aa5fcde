import type { Clock } from '../clock';
import type { EventRateLimiter, LimitAsk, LimitGrant, RateLimits } from './event-rate-limiter';
import { fullBucket, msUntilFull, takeFromBucket, type BucketState } from './token-bucket';

/** Buckets held before full ones are forgotten (a full bucket and no bucket mean the same). */
const SWEEP_AT = 10_000;

/**
 * Limits counted in this process (tiers 1–2): a token bucket per key (token-bucket.ts). The Redis
 * limiter of tier 3 counts in the shared budget instead (shared-budget.ts), with the library's
 * in-memory insurance.
 */
export class MemoryRateLimiter implements EventRateLimiter {
  /** Each key's bucket, with the rate it refills at. */
  private readonly buckets = new Map<string, BucketState & { rate: number }>();

  constructor(
    private readonly limits: RateLimits,
    private readonly clock: Clock,
  ) {}

  take(asks: readonly LimitAsk[]): Promise<LimitGrant[]> {
    const now = this.clock.now();
    if (this.buckets.size >= SWEEP_AT) this.sweep(now);
    const grants = asks.map(({ subject, events, mode }): LimitGrant => {
      const rate = this.rateFor(subject.app);
      if (rate === null) return { granted: events, retryAfterMs: 0, store: 'memory' };
      let bucket = this.buckets.get(subject.key);
      if (bucket === undefined) {
        bucket = { ...fullBucket(rate, now), rate };
        this.buckets.set(subject.key, bucket);
      }
      bucket.rate = rate;
      const { granted, waitMs } = takeFromBucket(bucket, now, rate, events, mode);
      return { granted, retryAfterMs: waitMs, store: 'memory' };
    });
    return Promise.resolve(grants);
  }

  refund({ key, app }: LimitAsk['subject'], events: number): void {
    const rate = this.rateFor(app);
    const bucket = this.buckets.get(key);
    if (rate === null || bucket === undefined) return;
    bucket.tokens = Math.min(rate, bucket.tokens + events);
  }

  async close(): Promise<void> {
    this.buckets.clear();
  }

  /** Events per second for `app`, or null when unlimited. */
  private rateFor(app: string): number | null {
    const perSecond = this.limits.limitFor(app);
    return perSecond <= 0 ? null : perSecond;
  }

  private sweep(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (now - bucket.at >= msUntilFull(bucket, bucket.rate)) this.buckets.delete(key);
    }
  }
}
