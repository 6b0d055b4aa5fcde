import type { Logger } from '../log/logger';
import type { RollupResolution } from './layout/rollups';

/*
 * The maintenance port: what the scheduler's jobs may do to the database, and the run protocol
 * (lock, claim, run, record) around them. Each adapter implements it: PostgreSQL on one
 * transaction per run (postgres/maintenance-runner.ts), SQLite in-process (sqlite/maintenance-runner.ts).
 */

/** Bounds of a batched delete. */
export interface DeleteLimits {
  /** Rows per statement. */
  readonly batchSize: number;
  /** Most rows one call deletes; the rest waits for the next run. */
  readonly maxRows: number;
}

export interface DeleteResult {
  readonly rows: number;
  /** False when `maxRows` was reached and more may remain. */
  readonly done: boolean;
}

/**
 * What a job may do to the database during its run. On PostgreSQL every call runs on the run's
 * transaction (it commits with the claim, or not at all); on SQLite each call is its own short
 * transaction, so jobs order their calls such that any prefix leaves a consistent state.
 */
export interface MaintenanceSession {
  readonly kind: 'postgres' | 'sqlite';
  /**
   * Takes up to `limits.maxEntries` entries of the rollup invalidation log (the (name, app,
   * minute) buckets that received samples since they were last folded) and recomputes those 1m
   * buckets from raw samples, then the 1h buckets holding them: from 1m rows for hours starting at
   * or after `limits.rawSourceBeforeMs`, from raw samples before it. The entries are removed in
   * the same transaction as the fold. A bucket whose rows cannot be folded is skipped, not fatal.
   */
  foldInvalidatedBuckets(limits: FoldLimits): Promise<FoldResult>;
  /**
   * Takes up to `maxEntries` entries of the error-group invalidation log (the (app, minute)s that
   * received errors) of minutes before `foldBeforeMs` and recomputes those minutes' error groups
   * from raw errors; once the log before `foldBeforeMs` is empty, reads take the groups of every
   * minute before it from the table. The entries are removed in the same transaction. SQLite keeps
   * no such table (its groups are computed at read time): nothing to fold.
   */
  foldErrorGroups(maxEntries: number, foldBeforeMs: number): Promise<ErrorGroupFold>;
  /**
   * Removes raw events and samples with ts < `cutoffMs` (a UTC midnight). PostgreSQL drops whole
   * daily partitions ending by the cutoff and deletes stragglers from the default partition in
   * batches, and the error groups of minutes before the cutoff; SQLite deletes in batches.
   */
  purgeRaw(
    cutoffMs: number,
    limits: DeleteLimits,
  ): Promise<{ rows: number; partitionsDropped: number; done: boolean }>;
  /** Removes rollup rows whose whole bucket ends at or before `cutoffMs`. */
  purgeRollups(resolution: RollupResolution, cutoffMs: number, limits: DeleteLimits): Promise<DeleteResult>;
  /** Removes run history of windows that started before `cutoffMs`. */
  purgeRunHistory(cutoffMs: number, limits: DeleteLimits): Promise<DeleteResult>;
  /**
   * Removes the loss map's counts of minutes before `cutoffMs` and the ids of client reports
   * received before it (a report resent after that would be counted again: past the raw
   * retention, its events are gone too).
   */
  purgeOutcomes(cutoffMs: number, limits: DeleteLimits): Promise<DeleteResult>;
  /**
   * Folds the loss map's oldest minute in [fromMs, beforeMs) that holds rows not folded yet: for
   * each key of that minute with such a row, every row of the key the call sees is replaced by one
   * folded row holding their sum, in one transaction (readers' sums never change; SQLite folds a
   * minute in several, a slice of its apps each, every key whole in one). Rows committed
   * meanwhile are not seen and stay as they are, for a later call.
   */
  compactOutcomeMinute(fromMs: number, beforeMs: number): Promise<OutcomeCompaction>;
  /**
   * PostgreSQL: rewrites each (bucket, app, name) group of metric blocks holding an unmerged block
   * (a write since the group was last rewritten) whose bucket is before `limits.beforeMs` as
   * merged blocks of its distinct samples, the first written copy of each, and counts the copies
   * removed in the loss map (`stored` −n, `duplicate` +n) in the same transaction
   * (postgres/metric-block-merge.ts). SQLite stores rows with a key: nothing to merge.
   */
  mergeMetricBlocks(limits: BlockMergeLimits): Promise<BlockMerge>;
  /** Creates missing daily partitions for the days touching [fromMs, toMs]; resolves to how many (SQLite: 0). */
  ensurePartitions(fromMs: number, toMs: number): Promise<number>;
}

/** Bounds of one `mergeMetricBlocks` call. */
export interface BlockMergeLimits {
  /** Groups of buckets before this (epoch ms) are merged. */
  readonly beforeMs: number;
  /** Most groups one statement merges. */
  readonly groupsPerStatement: number;
  /** Most groups one call merges; the rest waits for the next run. */
  readonly maxGroups: number;
  /** Whether to correct the loss map's stored counts (the writer counts them: `SLUICE_OUTCOMES`). */
  readonly correctCounts: boolean;
  /**
   * Only groups whose unmerged blocks all have a `seq` up to this (`BlockMerge.seqNow` of an
   * earlier call: quiet since); every group when absent.
   */
  readonly quietUpToSeq?: number;
}

/** What one `mergeMetricBlocks` call did. */
export interface BlockMerge {
  /** Groups merged. */
  readonly groups: number;
  /** Of them, groups rewritten (they held a copy, or small blocks); the others' blocks were marked merged. */
  readonly rewritten: number;
  /** Blocks deleted. */
  readonly blocks: number;
  /** Unmerged blocks marked merged as they are (their group held no copy). */
  readonly marked: number;
  /** Merged blocks written. */
  readonly written: number;
  /** Copies of samples removed (each counted `duplicate` when `correctCounts`). */
  readonly duplicates: number;
  /** No group before `beforeMs` is left unmerged (as this call saw them). */
  readonly caughtUp: boolean;
  /** `metric_blocks_seq`'s value when the call started: the next call's `quietUpToSeq`. */
  readonly seqNow: number;
}

/** What one `compactOutcomeMinute` call did. */
export interface OutcomeCompaction {
  /** The minute folded (epoch ms); null when no minute of the range had rows to fold. */
  readonly minute: number | null;
  /** Rows removed (each counted in exactly one written row). */
  readonly folded: number;
  /** Folded rows written: one per key. */
  readonly written: number;
}

/** What one `foldErrorGroups` call did. */
export interface ErrorGroupFold {
  /** Log entries claimed; fewer than `maxEntries`: the log before the fold's line was emptied. */
  readonly entries: number;
  /** Distinct (app, minute)s among them, each recomputed. */
  readonly minutes: number;
  /** Group rows written for them. */
  readonly groups: number;
  /** Whether every minute before the fold's line is now folded. */
  readonly caughtUp: boolean;
}

/** Bounds of one `foldInvalidatedBuckets` call. */
export interface FoldLimits {
  /** Most invalidation log entries claimed (and buckets folded) by one call. */
  readonly maxEntries: number;
  /** Hours starting before it (epoch ms) fold from raw samples: their 1m rows may be purged. */
  readonly rawSourceBeforeMs: number;
}

export interface FoldResult {
  /** Log entries claimed; fewer than `maxEntries`: the log was emptied. */
  readonly entries: number;
  /** Distinct 1m buckets among them, each recomputed or skipped. */
  readonly buckets: number;
  /** Rollup rows inserted or changed. */
  readonly rows1m: number;
  readonly rows1h: number;
  /**
   * Buckets whose fold failed on their own rows (see fold-isolation.ts): their rollups (1m and
   * the hour's 1h) are left as they were and their log entries are dropped with the others, so
   * each is reported once; a later sample in the bucket tries it again.
   */
  readonly skipped: readonly SkippedBucket[];
}

/** A 1m bucket the fold skipped, and why. */
export interface SkippedBucket {
  readonly name: string;
  readonly app: string;
  /** Bucket start (epoch ms). */
  readonly bucket: number;
  /** The database's error for this bucket alone. */
  readonly error: string;
}

/** What a job gets for one run. */
export interface MaintenanceRunContext {
  /**
   * Time of this run (epoch ms) on the database clock, read in the run's transaction: every
   * instance agrees on it, whatever its own clock says.
   */
  readonly now: number;
  readonly session: MaintenanceSession;
  /**
   * Aborted when the run's connection failed: nothing of this run can commit any more, so stop
   * at the next step.
   */
  readonly signal: AbortSignal;
  readonly logger: Logger;
}

/** Work run under a claim. `rows` is recorded with the run. */
export interface MaintenanceJob<Outcome extends { readonly rows: number }> {
  /** Names the claim (`scheduler_runs.job`) and the advisory lock (`jobLockName`). */
  readonly name: string;
  run(ctx: MaintenanceRunContext): Promise<Outcome>;
}

/** What one attempt at running a job in the current window came to. */
export type RunAttempt<Outcome> =
  /** Another session holds the job's advisory lock: it is running the job right now. */
  | { readonly kind: 'lock_busy' }
  /** The window is already claimed: the job ran (or is recorded as failed) this interval. */
  | { readonly kind: 'claim_lost'; readonly nowMs: number }
  /** This instance claimed the window and ran the job; recorded and committed. */
  | {
      readonly kind: 'ran';
      readonly slotMs: number;
      readonly nowMs: number;
      readonly durationMs: number;
      readonly outcome: Outcome;
    }
  /** Claimed, but the job threw: its writes were rolled back, the failure recorded and committed. */
  | {
      readonly kind: 'job_failed';
      readonly slotMs: number;
      readonly nowMs: number;
      readonly durationMs: number;
      readonly error: unknown;
    };

/**
 * Lock + claim + run + record. A job runs at most once per interval window `[k·I, (k+1)·I)` of
 * the database clock. `attempt` rejects when the run's transaction broke (connection lost, commit
 * failed): then nothing of it was recorded, and on PostgreSQL nothing of it was kept.
 */
export interface MaintenanceRunner {
  attempt<Outcome extends { readonly rows: number }>(
    job: MaintenanceJob<Outcome>,
    intervalMs: number,
  ): Promise<RunAttempt<Outcome>>;
  /** Releases connections. Called once no attempt is in flight. */
  close(): Promise<void>;
}

/** A claim row: one run of `job` in the window starting at `slotMs`. */
export interface RunClaim {
  readonly job: string;
  /** Start of the interval window claimed: `nowMs` rounded down to a multiple of `intervalMs`. */
  readonly slotMs: number;
  readonly intervalMs: number;
  /** Who runs it (host:pid or a configured id), for the history. */
  readonly instance: string;
  /** Database time of the claim. */
  readonly startedMs: number;
}

/** How a claimed run ended, recorded on its claim row. */
export interface RunCompletion {
  readonly job: string;
  readonly slotMs: number;
  readonly finishedMs: number;
  readonly durationMs: number;
  /** Rows the job touched; null when it failed. */
  readonly rows: number | null;
  /** The job's error message; null on success. */
  readonly error: string | null;
}

/** Start of the interval window holding `nowMs`: the claim's unit. */
export function slotStart(nowMs: number, intervalMs: number): number {
  return Math.floor(nowMs / intervalMs) * intervalMs;
}

/** A job's error as recorded on its claim row. */
export function errorText(error: unknown): string {
  return String((error as Error | null)?.message ?? error);
}

/** How a claimed job run went. */
export interface FinishedRun<Outcome> {
  /** Null when the job threw. */
  readonly outcome: Outcome | null;
  /** What the job threw; null on success. */
  readonly error: unknown;
  readonly durationMs: number;
}

/** A finished run as its claim row's completion and as the attempt's result. */
export function recordOf<Outcome extends { readonly rows: number }>(
  job: string,
  slotMs: number,
  nowMs: number,
  run: FinishedRun<Outcome>,
): { completion: RunCompletion; attempt: RunAttempt<Outcome> } {
  const { outcome, error, durationMs } = run;
  return {
    completion: {
      job,
      slotMs,
      finishedMs: Math.round(nowMs + durationMs),
      durationMs,
      rows: outcome?.rows ?? null,
      error: outcome !== null ? null : errorText(error),
    },
    attempt:
      outcome !== null
        ? { kind: 'ran', slotMs, nowMs, durationMs, outcome }
        : { kind: 'job_failed', slotMs, nowMs, durationMs, error },
  };
}

/**
 * Deletes in statements of at most `limits.batchSize` rows until fewer come back or
 * `limits.maxRows` is reached; `deleteAtMost(n)` deletes up to n rows and returns how many it did.
 * `between` runs between two statements (SQLite yields to the event loop there).
 */
export async function deleteInBatches(
  limits: DeleteLimits,
  deleteAtMost: (n: number) => Promise<number> | number,
  between?: () => Promise<unknown>,
): Promise<DeleteResult> {
  let rows = 0;
  while (rows < limits.maxRows) {
    const n = Math.min(limits.batchSize, limits.maxRows - rows);
    const deleted = await deleteAtMost(n);
    rows += deleted;
    if (deleted < n) return { rows, done: true };
    await between?.();
  }
  return { rows, done: false };
}

/**
 * Runs a claimed job, timed, and records how it went. `afterRun` completes a successful run inside
 * the same try (PostgreSQL releases its savepoint there); `onError` may rethrow to abandon the run
 * (a lost connection: nothing can be recorded), else the failure is recorded.
 */
export async function runAndRecord<Outcome extends { readonly rows: number }>(
  job: MaintenanceJob<Outcome>,
  slotMs: number,
  context: MaintenanceRunContext,
  hooks: { afterRun?(): Promise<void>; onError?(err: unknown): Promise<void> } = {},
): Promise<{ completion: RunCompletion; attempt: RunAttempt<Outcome> }> {
  const started = performance.now();
  let outcome: Outcome | null = null;
  let error: unknown = null;
  try {
    const result = await job.run(context);
    await hooks.afterRun?.();
    outcome = result;
  } catch (err) {
    await hooks.onError?.(err);
    error = err;
  }
  return recordOf(job.name, slotMs, context.now, { outcome, error, durationMs: performance.now() - started });
}
