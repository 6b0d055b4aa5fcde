/** Capped exponential backoff with equal jitter (half the cap fixed, half drawn). */
export interface BackoffOptions {
  /** First delay (milliseconds). Default 50. */
  readonly baseMs: number;
  /** Largest delay (milliseconds). Default 5000. */
  readonly maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 50, maxMs: 5000 };

/**
 * The writer loop's: at most a second between two attempts at a batch, so writes (and readiness,
 * which follows them) resume within a second of storage taking writes again, however long it
 * refused them. At most `SLUICE_WRITE_CONCURRENCY` batches retry at once: a few failing
 * transactions a second.
 */
export const WRITER_BACKOFF: BackoffOptions = { baseMs: 50, maxMs: 1000 };

/** Delay before retry number `attempt` (0-based): uniform in [cap/2, cap], cap = min(max, base·2^attempt). */
export function backoffDelay(
  attempt: number,
  options: BackoffOptions,
  random: () => number = Math.random,
): number {
  const cap = Math.min(options.maxMs, options.baseMs * 2 ** Math.min(attempt, 30));
  return Math.round(cap / 2 + (random() * cap) / 2);
}
