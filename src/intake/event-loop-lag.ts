import type { Gauge } from 'prom-client';

export interface EventLoopLagOptions {
  /** How often the probe timer is due (milliseconds). Default 5. */
  readonly tickMs?: number;
  /** Window over which lag must persist to count as standing (milliseconds). Default 100. */
  readonly windowMs?: number;
  /** Set at every tick to the standing lag (seconds). */
  readonly gauge?: Gauge;
}

/**
 * How far behind the event loop runs: a timer due every `tickMs` records how late it fires. The
 * standing lag is the mean lateness over the last `windowMs` (or, when no tick fired in that
 * window, the time since the last one): one slow callback or GC pause moves it a little, a loop
 * that stays busy moves it a lot. A request waits about that long before the collector turns to
 * it, so it is the signal for shedding load before any work is spent on it.
 */
export class EventLoopLag {
  private readonly tickMs: number;
  private readonly windowMs: number;
  private timer: NodeJS.Timeout | null = null;
  private expectedAt = 0;
  private lastTickAt = 0;
  /** Lateness of recent ticks and when they fired, oldest first. */
  private readonly samples: Array<{ at: number; lateMs: number }> = [];
  private tickCount = 0;

  constructor(private readonly o: EventLoopLagOptions = {}) {
    this.tickMs = o.tickMs ?? 5;
    this.windowMs = o.windowMs ?? 100;
  }

  /** Idempotent. */
  start(): void {
    if (this.timer) return;
    this.lastTickAt = performance.now();
    this.expectedAt = this.lastTickAt + this.tickMs;
    this.timer = setInterval(() => this.tick(), this.tickMs);
    this.timer.unref();
  }

  /** Idempotent. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.samples.length = 0;
  }

  /** Ticks of the probe since it was made (lets a caller wait for samples instead of sleeping). */
  get ticks(): number {
    return this.tickCount;
  }

  /** The standing lag now (milliseconds); 0 when the monitor is stopped. */
  standingMs(): number {
    if (this.timer === null) return 0;
    const now = performance.now();
    const sinceTick = now - this.lastTickAt - this.tickMs;
    // No tick for a whole window: the loop has been blocked at least this long.
    if (sinceTick >= this.windowMs) return sinceTick;
    let sum = 0;
    let n = 0;
    for (const s of this.samples) {
      if (now - s.at > this.windowMs) continue;
      sum += s.lateMs;
      n++;
    }
    return n === 0 ? 0 : sum / n;
  }

  private tick(): void {
    const now = performance.now();
    const lateMs = Math.max(0, now - this.expectedAt);
    this.tickCount++;
    this.lastTickAt = now;
    this.expectedAt = now + this.tickMs;
    this.samples.push({ at: now, lateMs });
    while (this.samples.length > 0 && now - (this.samples[0] as { at: number }).at > this.windowMs) {
      this.samples.shift();
    }
    this.o.gauge?.set(this.standingMs() / 1000);
  }
}
