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
