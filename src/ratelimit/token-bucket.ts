/**
 * The token bucket both limiters count with (the Redis one runs the same steps in Lua:
 * redis-take-script.ts). A bucket refills at `rate` tokens per second up to `rate` (one second of
 * budget); a token is one event. It may go below zero only through a `whole` take (a debt).
 */
export interface BucketState {
  /** Tokens at `at`; may be negative (a debt). */
  tokens: number;
  /** When `tokens` was last brought up to date (milliseconds, the limiter's clock). */
  at: number;
}

export interface BucketTake {
  readonly granted: number;
  /** 0 when everything was granted; else milliseconds until the rest (at most one window of it) could be. */
  readonly waitMs: number;
}

/** A new bucket is full. */
export function fullBucket(rate: number, now: number): BucketState {
  return { tokens: rate, at: now };
}

/** Refills `state` up to `now`, then takes `wanted` events (mutates `state`). */
export function takeFromBucket(
  state: BucketState,
  now: number,
  rate: number,
  wanted: number,
  mode: 'partial' | 'whole',
): BucketTake {
  const elapsed = Math.max(0, now - state.at);
  state.tokens = Math.min(rate, state.tokens + (elapsed * rate) / 1000);
  state.at = now;
  const granted =
    mode === 'whole'
      ? state.tokens >= 1
        ? wanted
        : 0
      : Math.max(0, Math.min(wanted, Math.floor(state.tokens)));
  state.tokens -= granted;
  const rest = wanted - granted;
  if (rest === 0) return { granted, waitMs: 0 };
  // Partial: until the rest, or a whole window's budget of it, is there. Whole: until the budget is positive.
  const needed = (mode === 'whole' ? 1 : Math.min(rest, rate)) - state.tokens;
  return { granted, waitMs: Math.ceil((needed * 1000) / rate) };
}

/** Milliseconds until a bucket is full again (after which its state can be forgotten). */
export function msUntilFull(state: BucketState, rate: number): number {
  return Math.max(0, Math.ceil(((rate - state.tokens) * 1000) / rate));
}
