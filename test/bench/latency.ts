/** Request latencies of one run (milliseconds), kept whole: runs are short enough to sort. */
export class LatencyRecorder {
  private values = new Float64Array(1024);
  private n = 0;
  private sorted: Float64Array | null = null;

  get count(): number {
    return this.n;
  }

  record(ms: number): void {
    if (this.n === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.n++] = ms;
    this.sorted = null;
  }

  /** The q-quantile (0..1) by nearest rank; NaN when nothing was recorded. */
  quantile(q: number): number {
    if (this.n === 0) return NaN;
    this.sorted ??= this.values.slice(0, this.n).sort();
    const sorted = this.sorted;
    const rank = Math.min(this.n - 1, Math.max(0, Math.ceil(q * this.n) - 1));
    return sorted[rank] as number;
  }

  get p50(): number {
    return this.quantile(0.5);
  }

  get p99(): number {
    return this.quantile(0.99);
  }

  get max(): number {
    return this.quantile(1);
  }
}
