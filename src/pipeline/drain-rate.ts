import type { Clock } from '../clock';

/**
 * Events committed per second over a sliding window, used to tell a
 * throttled client how long the queue needs to make room (`Retry-After`).
 */
export class DrainRate {
  private readonly buckets: number[];
  private readonly bucketMs: number;
  private currentBucket = 0;
  private currentStart: number;

  /** `windowMs`: how far back the rate looks (milliseconds), default 5000, in 10 buckets. */
  constructor(
    private readonly clock: Clock,
    private readonly windowMs = 5000,
  ) {
    this.buckets = new Array<number>(10).fill(0);
    this.bucketMs = windowMs / this.buckets.length;
    this.currentStart = clock.now();
  }

  record(events: number): void {
    this.advance();
    this.buckets[this.currentBucket] = (this.buckets[this.currentBucket] ?? 0) + events;
  }

  /** Events per second over the window; 0 when nothing drained (e.g. storage down). */
  perSecond(): number {
    this.advance();
    let sum = 0;
    for (const b of this.buckets) sum += b;
    return (sum * 1000) / this.windowMs;
  }

  private advance(): void {
    const now = this.clock.now();
    let steps = Math.floor((now - this.currentStart) / this.bucketMs);
    if (steps <= 0) return;
    if (steps > this.buckets.length) steps = this.buckets.length;
    for (let i = 0; i < steps; i++) {
      this.currentBucket = (this.currentBucket + 1) % this.buckets.length;
      this.buckets[this.currentBucket] = 0;
    }
    this.currentStart = now - ((now - this.currentStart) % this.bucketMs);
  }
}

/** Bounds of any `Retry-After` the collector sends (seconds). */
export const RETRY_AFTER_MIN_S = 1;
export const RETRY_AFTER_MAX_S = 30;

/**
 * Seconds until a lane holding `held` events, draining at `perSecond`, has
 * room for `needed` more: integer, clamped to [1, 30]. Nothing draining → 30.
 */
export function retryAfterSeconds(held: number, needed: number, capacity: number, perSecond: number): number {
  if (perSecond <= 0) return RETRY_AFTER_MAX_S;
  const mustDrain = Math.max(1, held + needed - capacity);
  const s = Math.ceil(mustDrain / perSecond);
  return Math.min(RETRY_AFTER_MAX_S, Math.max(RETRY_AFTER_MIN_S, s));
}
