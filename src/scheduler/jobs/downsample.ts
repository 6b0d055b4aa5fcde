import type { Logger } from '../../log/logger';
import { ROLLUP_WIDTH_MS, floorTo } from '../../storage/layout/rollups';
import type { MaintenanceSession, SkippedBucket } from '../../storage/maintenance';
import type { Job } from '../job';

const HOUR_MS = ROLLUP_WIDTH_MS['1h'];
const MINUTE_MS = ROLLUP_WIDTH_MS['1m'];

/** Most error-group invalidation log entries one fold takes, and most such folds per run. */
export const ERROR_GROUP_ENTRIES_PER_FOLD = 5_000;
export const ERROR_GROUP_FOLDS_PER_RUN = 4;

/**
 * The error groups of minutes before this are folded: the current minute and the one before it,
 * still being written, are left to raw reads (a later write to a folded minute is folded at the
 * next run all the same).
 */
export function errorGroupsFoldBefore(now: number): number {
  return floorTo(now, MINUTE_MS) - MINUTE_MS;
}

/** Default most invalidation log entries one fold statement takes. */
export const DEFAULT_MAX_ENTRIES_PER_FOLD = 20_000;
/** Default most folds per run; what is left waits for the next run. */
export const DEFAULT_MAX_FOLDS_PER_RUN = 25;

export interface DownsampleOptions {
  /**
   * `SLUICE_RETENTION_1M` (milliseconds). An hour whose 1m rows the purge job may already have
   * removed (starting before now − retention + 2 h) is folded from raw samples instead of 1m rows.
   */
  readonly retention1mMs: number;
  /**
   * Most invalidation log entries (≈ buckets) one fold takes, so each statement stays well within
   * the statement timeout. Default 20 000.
   */
  readonly maxEntriesPerFold?: number;
  /** Most folds one run makes. Default 25 (500 000 entries per run). */
  readonly maxFoldsPerRun?: number;
}

/**
 * The 1h buckets starting before this fold from raw samples: the purge removes a 1m row once its
 * bucket ends `retention1mMs` ago, so an hour starting two hours after that line still has all
 * its 1m rows for the whole run (and a purge running meanwhile cannot reach them either).
 */
export function rawSourceBefore(now: number, retention1mMs: number): number {
  return floorTo(now - retention1mMs, HOUR_MS) + 2 * HOUR_MS;
}

/**
 * Metric samples and SDK summaries → 1m rollups (from raw) → 1h rollups (from 1m), per (name, app),
 * for exactly the buckets the invalidation log says received samples since their last fold,
 * however late (see src/storage/postgres/migrations/003_rollup_invalidations.ts). Each bucket is
 * recomputed whole and replaced, so a second run changes nothing, duplicates stored once count
 * once, and the cost of a run follows what was written, not the width of a window. A bucket whose
 * samples cannot be folded (see src/storage/fold-isolation.ts) is skipped, counted and logged
 * once; the others fold. Then the error groups of the minutes that received errors, the same way
 * (PostgreSQL only).
 */
export function downsampleJob(options: DownsampleOptions): Job {
  const maxEntries = options.maxEntriesPerFold ?? DEFAULT_MAX_ENTRIES_PER_FOLD;
  const maxFolds = options.maxFoldsPerRun ?? DEFAULT_MAX_FOLDS_PER_RUN;
  if (!Number.isSafeInteger(maxEntries) || maxEntries < 1)
    throw new Error('downsample maxEntriesPerFold must be ≥ 1');
  if (!Number.isSafeInteger(maxFolds) || maxFolds < 1)
    throw new Error('downsample maxFoldsPerRun must be ≥ 1');
  return {
    name: 'downsample',
    async run({ now, session, signal, logger }) {
      const limits = { maxEntries, rawSourceBeforeMs: rawSourceBefore(now, options.retention1mMs) };
      let buckets = 0;
      let rows1m = 0;
      let rows1h = 0;
      let skipped = 0;
      let folds = 0;
      let caughtUp = false;
      while (!caughtUp && folds < maxFolds) {
        const r = await session.foldInvalidatedBuckets(limits);
        buckets += r.buckets;
        rows1m += r.rows1m;
        rows1h += r.rows1h;
        skipped += r.skipped.length;
        if (r.skipped.length > 0) logSkipped(logger, r.skipped);
        folds++;
        caughtUp = r.entries < maxEntries;
        signal.throwIfAborted();
      }
      const errorGroups = await foldErrorGroups(session, errorGroupsFoldBefore(now), signal);
      return {
        rows: rows1m + rows1h + errorGroups.groups,
        skipped,
        detail: {
          buckets,
          rows1m,
          rows1h,
          skipped,
          folds,
          caughtUp,
          errorMinutes: errorGroups.minutes,
          errorGroups: errorGroups.groups,
          errorGroupsCaughtUp: errorGroups.caughtUp,
        },
      };
    },
  };
}

/**
 * Error groups per (app, minute, fingerprint), from the minutes the error-group invalidation log
 * names (PostgreSQL; see src/storage/postgres/error-groups.ts), in folds of a bounded size.
 */
async function foldErrorGroups(
  session: MaintenanceSession,
  foldBefore: number,
  signal: AbortSignal,
): Promise<{ minutes: number; groups: number; folds: number; caughtUp: boolean }> {
  let minutes = 0;
  let groups = 0;
  let folds = 0;
  let caughtUp = false;
  while (!caughtUp && folds < ERROR_GROUP_FOLDS_PER_RUN) {
    const r = await session.foldErrorGroups(ERROR_GROUP_ENTRIES_PER_FOLD, foldBefore);
    minutes += r.minutes;
    groups += r.groups;
    folds++;
    caughtUp = r.caughtUp;
    signal.throwIfAborted();
  }
  return { minutes, groups, folds, caughtUp };
}

/** Most skipped buckets named in one log line; the count covers all of them. */
const MAX_NAMED_SKIPPED = 10;

/** One line per fold that skipped buckets: each bucket is skipped once (its log entry is gone). */
function logSkipped(logger: Logger, skipped: readonly SkippedBucket[]): void {
  logger.warn(
    {
      skipped: skipped.length,
      buckets: skipped.slice(0, MAX_NAMED_SKIPPED).map(({ name, app, bucket }) => ({ name, app, bucket })),
      error: skipped[0]?.error,
    },
    'rollup buckets skipped: their samples cannot be folded; their rollups are left as they were',
  );
}
