/**
 * Lengths of every measured window, read once from the environment. `BENCH_QUICK=1` shortens them
 * all for a smoke run: the figures are then only good for checking that the bench works.
 */
export interface BenchOptions {
  readonly quick: boolean;
  /** Admin URL of the PostgreSQL server that bench databases are created on. */
  readonly adminUrl: string;
  /** Events in the raw COPY, write-path and layout runs (count bound of each). */
  readonly copyEvents: number;
  /** Longest a COPY or write-path run may take (milliseconds); it stops early when reached. */
  readonly copyMaxMs: number;
  /** Closed-loop window of each ingest run (milliseconds). */
  readonly closedMs: number;
  /** Window of each baseline HTTP run (milliseconds). */
  readonly baselineMs: number;
  /** Open-loop window at half the saturation rate (milliseconds). */
  readonly openMs: number;
  /** Open-loop window at three times the saturation rate (milliseconds). */
  readonly overloadMs: number;
  /** Closed-loop concurrencies tried with `SLUICE_ACK=queued`; the best is kept. */
  readonly queuedConcurrencies: readonly number[];
  /** Closed-loop concurrencies tried with `SLUICE_ACK=stored` (each request waits for its commit). */
  readonly storedConcurrencies: readonly number[];
  /** Concurrency of the single-event runs, Sluice and the null handlers alike. */
  readonly singleEventConcurrency: number;
  /** Longest wait for the database to hold every acknowledged event after a run (milliseconds). */
  readonly storeTimeoutMs: number;
  /** Load before each measured window of the time-series database baselines, not measured (milliseconds). */
  readonly tsdbWarmupMs: number;
  /** Measured window of each time-series database baseline and of Sluice beside them (milliseconds). */
  readonly tsdbWindowMs: number;
  /** Rounds of those windows, each server once a round; rows give the medians. */
  readonly tsdbRounds: number;
  /**
   * Rounds of the storage-cost suite, every variant once a round; rows give the medians. Default 3
   * (1 with `BENCH_QUICK`); `BENCH_STORAGE_ROUNDS` sets more, for a busy box.
   */
  readonly storageRounds: number;
  /**
   * Alternating rounds (outcomes on, outcomes off) of the outcomes suite. Default 3 (1 with
   * `BENCH_QUICK`); `BENCH_OUTCOMES_ROUNDS` sets more, for a busy box.
   */
  readonly outcomesRounds: number;
}

/** A positive integer from `value`, else null. */
function roundsFrom(value: string | undefined): number | null {
  const n = Number(value ?? NaN);
  return Number.isInteger(n) && n > 0 ? n : null;
}

const DEFAULT_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export function readBenchOptions(env: NodeJS.ProcessEnv = process.env): BenchOptions {
  const quick = env.BENCH_QUICK === '1' || env.BENCH_QUICK === 'true';
  const adminUrl = env.BENCH_PG_URL ?? env.TEST_PG_URL ?? DEFAULT_ADMIN_URL;
  const givenRounds = roundsFrom(env.BENCH_STORAGE_ROUNDS);
  const outcomesRounds = roundsFrom(env.BENCH_OUTCOMES_ROUNDS);
  if (quick) {
    return {
      quick,
      adminUrl,
      copyEvents: 20_000,
      copyMaxMs: 3_000,
      closedMs: 1_500,
      baselineMs: 1_000,
      openMs: 1_500,
      overloadMs: 1_500,
      queuedConcurrencies: [4],
      storedConcurrencies: [16],
      singleEventConcurrency: 16,
      storeTimeoutMs: 15_000,
      tsdbWarmupMs: 500,
      tsdbWindowMs: 1_500,
      tsdbRounds: 1,
      storageRounds: givenRounds ?? 1,
      outcomesRounds: outcomesRounds ?? 1,
    };
  }
  return {
    quick,
    adminUrl,
    copyEvents: 150_000,
    copyMaxMs: 15_000,
    closedMs: 6_000,
    baselineMs: 4_000,
    openMs: 6_000,
    overloadMs: 5_000,
    queuedConcurrencies: [1, 2, 4, 8, 16],
    storedConcurrencies: [16, 32, 64],
    singleEventConcurrency: 16,
    storeTimeoutMs: 30_000,
    tsdbWarmupMs: 3_000,
    tsdbWindowMs: 10_000,
    tsdbRounds: 3,
    storageRounds: givenRounds ?? 3,
    outcomesRounds: outcomesRounds ?? 3,
  };
}
