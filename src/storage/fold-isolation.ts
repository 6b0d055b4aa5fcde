import { errorText } from './maintenance';
import { isPermanentWriteError } from './write-errors';

/*
 * One bucket must not stop the downsample job for every other: when the fold of a range of claimed
 * buckets fails because of the rows it reads (a count past a bigint, a sum that is NaN), the
 * range is rolled back to its savepoint and halved, until the failing buckets are alone; those
 * are skipped (their log entries go with the run, so each is reported once) and the rest fold.
 * k failing buckets among n cost O(k · log n) folds. Any other failure (connection lost, timeout,
 * a schema error) is not the data's: it still fails the run, which the next interval retries.
 */

/** Taken buckets `from ≤ i < to`. */
export interface BucketRange {
  readonly from: number;
  readonly to: number;
}

/** Rollup rows one fold inserted or changed. */
export interface FoldRows {
  readonly rows1m: number;
  readonly rows1h: number;
}

/**
 * The bisection over `count` claimed buckets (numbered from 0), driven by an adapter that folds each
 * range it is given under a savepoint: `next()` names the range, `folded` or `failed` says how it
 * went. All buckets come first; a failed range is followed by its two halves.
 */
export class IsolatingFold {
  rows1m = 0;
  rows1h = 0;
  private readonly pending: BucketRange[];
  private readonly skippedBuckets: Array<{ readonly index: number; readonly error: string }> = [];

  constructor(count: number) {
    this.pending = count > 0 ? [{ from: 0, to: count }] : [];
  }

  /** The range to fold now; null once every bucket is folded or skipped. */
  next(): BucketRange | null {
    return this.pending.at(-1) ?? null;
  }

  /** The fold of `next()` succeeded. */
  folded(rows: FoldRows): void {
    this.pending.pop();
    this.rows1m += rows.rows1m;
    this.rows1h += rows.rows1h;
  }

  /**
   * The fold of `next()` failed with `err`: rethrown unless it is the rows' fault (then the
   * adapter rolls the range back to its savepoint and goes on).
   */
  failed(err: unknown): void {
    if (!isBucketDataError(err)) throw err;
    const range = this.pending.pop();
    if (range === undefined) return;
    if (range.to - range.from === 1) {
      this.skippedBuckets.push({ index: range.from, error: errorText(err) });
      return;
    }
    const mid = range.from + ((range.to - range.from) >> 1);
    this.pending.push({ from: mid, to: range.to }, { from: range.from, to: mid });
  }

  /** The buckets skipped so far: index and the error of its fold alone. */
  get skipped(): ReadonlyArray<{ readonly index: number; readonly error: string }> {
    return this.skippedBuckets;
  }
}

/**
 * Whether a fold failed because of the rows it read, so that another range may succeed:
 * PostgreSQL data and integrity errors (SQLSTATE classes 22, 23), SQLite constraint and type
 * errors, and SQLite's "integer overflow" of a sum.
 */
export function isBucketDataError(err: unknown): boolean {
  if (isPermanentWriteError(err)) return true;
  const e = err as { code?: unknown; message?: unknown } | null;
  return e?.code === 'SQLITE_ERROR' && e.message === 'integer overflow';
}
