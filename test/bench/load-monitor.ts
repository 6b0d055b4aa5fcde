import os from 'node:os';

/** The 1-minute load average over a run, sampled in the background: how shared the box was. */
export class LoadMonitor {
  private readonly samples: number[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(intervalMs = 2000) {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  /** The load average now (also recorded). */
  sample(): number {
    const load = os.loadavg()[0] ?? 0;
    this.samples.push(load);
    return load;
  }

  /** Stops sampling; idempotent. */
  stop(): { min: number; max: number; mean: number } {
    clearInterval(this.timer);
    const n = this.samples.length;
    const round = (x: number): number => Math.round(x * 100) / 100;
    return {
      min: round(Math.min(...this.samples)),
      max: round(Math.max(...this.samples)),
      mean: round(this.samples.reduce((a, b) => a + b, 0) / n),
    };
  }
}
