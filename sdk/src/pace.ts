/**
 * Pacing (docs/sdk.md, "Sampling and pacing"): while the collector advises a share below 1 (it
 * cannot take everything this app captures), requests are spread at what it said it may take —
 * the advised share of the rate this client captures events at, a quarter more so that a backlog
 * drains when there is room — instead of leaving back to back as batches refused in part. Without
 * advice (or at 1) nothing is paced. `Retry-After` and backoff apply on top.
 */

/** How far back the capture rate is measured (milliseconds), as the collector measures demand. */
const CAPTURE_WINDOW_MS = 10_000;
/** Buckets of the capture window. */
const BUCKETS = 10;
/** How far above the advised rate a paced client sends: the backlog's share of the pace. */
const PROBE = 1.25;

export class Pace {
  /** The share of this app's captured events (not errors) the collector last advised; 1: none. */
  private share = 1;
  /** No paced request starts before this time (ms). */
  private notBefore = -Infinity;
  /** Events captured per bucket of the window, the newest at `head`. */
  private readonly counts = new Array<number>(BUCKETS).fill(0);
  private head = 0;
  private headStart = -Infinity;
  /** When the first capture was counted: a young window's rate is over its age. */
  private since = Infinity;

  /** An event that a limit could refuse (not an error) was captured at `now`, before any sampling. */
  captured(now: number): void {
    this.advance(now);
    this.counts[this.head] = (this.counts[this.head] ?? 0) + 1;
    if (this.since === Infinity) this.since = now;
  }

  /** An answer came: `share` is its advice, undefined when it had none (then nothing is paced). */
  advised(share: number | undefined): void {
    this.share = share === undefined ? 1 : share;
    if (this.share >= 1) this.notBefore = -Infinity;
  }

  /** The earliest time the next request may start (ms); -Infinity while not pacing. */
  nextAt(): number {
    return this.share < 1 ? this.notBefore : -Infinity;
  }

  /** A request of `events` leaves at `now`: the next one waits for its share of the pace. */
  sent(events: number, now: number): void {
    if (this.share >= 1) return;
    const perSecond = PROBE * this.share * this.capturedPerSecond(now);
    this.notBefore = perSecond > 0 ? now + (events * 1000) / perSecond : -Infinity;
  }

  /** Events captured per second over the window (or over the time since the first, when shorter). */
  private capturedPerSecond(now: number): number {
    this.advance(now);
    let sum = 0;
    for (const c of this.counts) sum += c;
    // The buckets cover the older ones whole and the newest up to now.
    const covered = CAPTURE_WINDOW_MS - CAPTURE_WINDOW_MS / BUCKETS + (now - this.headStart);
    const span = Math.min(covered, Math.max(1000, now - this.since));
    return (sum * 1000) / span;
  }

  private advance(now: number): void {
    const bucketMs = CAPTURE_WINDOW_MS / BUCKETS;
    if (this.headStart === -Infinity) this.headStart = now;
    let steps = Math.floor((now - this.headStart) / bucketMs);
    if (steps <= 0) return;
    this.headStart += steps * bucketMs;
    if (steps > BUCKETS) steps = BUCKETS;
    for (let i = 0; i < steps; i++) {
      this.head = (this.head + 1) % BUCKETS;
      this.counts[this.head] = 0;
    }
  }
}
