/**
 * The token bucket of the in-process limiter (memory-rate-limiter.ts). A bucket refills at `rate`
 * tokens per second up to `capacity` (the burst allowance: `SLUICE_RATE_LIMIT_BURST` of the
 * limit); a token is one event. It may go below zero only through a `whole` take (a debt).
 */
export interface BucketState {
  /** Tokens at `at`; may be negative (a debt). */
  tokens: number;
  /** When `tokens` was last brought up to date (milliseconds, the limiter's clock). */
  at: number;
}

/** How fast a bucket refills and how much it holds. */
export interface BucketShape {
  /** Tokens per second. */
  readonly rate: number;
  /** Most tokens held (at least `rate`: one second of the limit). */
  readonly capacity: number;
}

export interface BucketSpend {
  readonly granted: number;
  /** 0 when everything was granted; else milliseconds until the rest (at most one second of it) could be. */
  readonly waitMs: number;
}

/** A new bucket is full. */
export function fullBucket(shape: BucketShape, now: number): BucketState {
  return { tokens: shape.capacity, at: now };
}

/** Refills `state` up to `now`, then takes `wanted` events (mutates `state`). */
export function spendFromBucket(
  state: BucketState,
  now: number,
  { rate, capacity }: BucketShape,
  wanted: number,
  mode: 'partial' | 'whole',
): BucketSpend {
  const elapsed = Math.max(0, now - state.at);
  state.tokens = Math.min(capacity, state.tokens + (elapsed * rate) / 1000);
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
  // Partial: until the rest, or one second's budget of it, is there. Whole: until the budget is positive.
  const needed = (mode === 'whole' ? 1 : Math.min(rest, rate)) - state.tokens;
  return { granted, waitMs: Math.ceil((needed * 1000) / rate) };
}

/** Gives back `events` spent from `state`, up to its capacity (mutates `state`). */
export function returnToBucket(state: BucketState, { capacity }: BucketShape, events: number): void {
  state.tokens = Math.min(capacity, state.tokens + events);
}

/** Milliseconds until a bucket is full again (after which its state can be forgotten). */
export function msUntilFull(state: BucketState, { rate, capacity }: BucketShape): number {
  return Math.max(0, Math.ceil(((capacity - state.tokens) * 1000) / rate));
}
