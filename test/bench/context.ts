import type { BenchOptions } from './bench-options';
import type { BenchDatabases } from './pg-bench-db';
import type { BodyCorpus } from './workload';

/** What every suite gets from `run.ts`. */
export interface BenchContext {
  readonly options: BenchOptions;
  readonly databases: BenchDatabases;
  /** Bodies of 100 events, shared by the HTTP runs (each run writes into a fresh database). */
  readonly batches: BodyCorpus;
  /** Bodies of one event. */
  readonly singles: BodyCorpus;
  /** Bodies used to warm a server up before its measured window; never measured. */
  readonly warmup: BodyCorpus;
  /** Progress lines (stderr), so that stdout holds the table only. */
  progress(message: string): void;
}
