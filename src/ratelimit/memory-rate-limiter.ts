import type { Clock } from '../clock';
import type { EventRateLimiter, LimitAsk, LimitGrant, RateLimits } from './event-rate-limiter';
import {
  fullBucket,
  msUntilFull,
  returnToBucket,
  spendFromBucket,
  type BucketShape,
  type BucketState,
} from './token-bucket';

/** Buckets held before full ones are forgotten (a full bucket and no bucket mean the same). */
const SWEEP_AT = 10_000;

/** A key's bucket, with the shape of its app's limit when it was last used. */
interface HeldBucket extends BucketState {
  shape: BucketShape;
}

/**
 * Limits counted in this process (tiers 1–2): a token bucket per key (token-bucket.ts) that
 * refills at the app's limit and holds `SLUICE_RATE_LIMIT_BURST` of it. The Redis limiter of
 * tier 3 counts in the shared budget instead (shared-budget.ts), with the library's in-memory
 * insurance.
 */
export class MemoryRateLimiter implements EventRateLimiter {
  private readonly buckets = new Map<string, HeldBucket>();

  constructor(
    private readonly limits: RateLimits,
    private readonly clock: Clock,
  ) {}

  spend(asks: readonly LimitAsk[]): Promise<LimitGrant[]> {
    const now = this.clock.now();
    if (this.buckets.size >= SWEEP_AT) this.sweep(now);
    const grants = asks.map(({ subject, events, mode }): LimitGrant => {
      const shape = this.shapeFor(subject.app);
      if (shape === null) return { granted: events, retryAfterMs: 0, store: 'memory' };
      let bucket = this.buckets.get(subject.key);
      if (bucket === undefined) {
        bucket = { ...fullBucket(shape, now), shape };
        this.buckets.set(subject.key, bucket);
      }
      bucket.shape = shape;
      const { granted, waitMs } = spendFromBucket(bucket, now, shape, events, mode);
      return { granted, retryAfterMs: waitMs, store: 'memory' };
    });
    return Promise.resolve(grants);
  }

  refund({ key, app }: LimitAsk['subject'], events: number): void {
    const shape = this.shapeFor(app);
    const bucket = this.buckets.get(key);
    if (shape !== null && bucket !== undefined) returnToBucket(bucket, shape, events);
  }

  async close(): Promise<void> {
    this.buckets.clear();
  }

  /** The bucket of `app`'s limit, or null when it is unlimited. */
  private shapeFor(app: string): BucketShape | null {
    const rate = this.limits.limitFor(app);
    return rate <= 0 ? null : { rate, capacity: this.limits.burstFor(app) };
  }

  private sweep(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (now - bucket.at >= msUntilFull(bucket, bucket.shape)) this.buckets.delete(key);
    }
  }
}
