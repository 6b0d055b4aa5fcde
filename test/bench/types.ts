/** One row of the benchmark table. Ratios, not absolute times, are what a run compares. */
export interface BenchRow {
  /** Suite, e.g. `ingest`, `sdk`. */
  readonly suite: string;
  /** What was measured, e.g. `batched ingest (postgres)`. */
  readonly name: string;
  readonly value: number;
  /** e.g. `events/s`, `µs/event`, `ms`, `MiB`. */
  readonly unit: string;
  /** Name of the row this one is compared with, in the same run. */
  readonly baseline?: string;
  /** value ÷ baseline value (or the inverse where lower is better; see `target`). */
  readonly ratio?: number;
  /** Human-readable target, e.g. `≥ 0.6 × raw COPY`. */
  readonly target?: string;
  /** Whether the target was met; absent when the row has no target. */
  readonly met?: boolean;
  /** Extra figures: p50/p99, CPU s per million events, peak RSS… */
  readonly extra?: Readonly<Record<string, number | string>>;
}
