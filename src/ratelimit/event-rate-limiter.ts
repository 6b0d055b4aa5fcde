/** Where a rate-limit decision was counted. */
export type LimiterStore = 'memory' | 'redis' | 'insurance';

export interface LimitDecision {
  readonly allowed: boolean;
  /** When not allowed: time until the window frees (milliseconds). */
  readonly retryAfterMs: number;
  readonly store: LimiterStore;
}

/**
 * Counts events per key (an app, or an API key id) in one-second windows.
 * A request's events are admitted all together or not at all; a refused
 * request does not use up the key's budget.
 */
/** Who is counted: `key` names the budget (an app, or an API key id); `app`'s limit applies. */
export interface LimitSubject {
  readonly key: string;
  readonly app: string;
}

export interface EventRateLimiter {
  consume(subject: LimitSubject, events: number): Promise<LimitDecision>;
  /** Gives back events counted for a request that could not be queued after all. */
  refund(subject: LimitSubject, events: number): void;
  close(): Promise<void>;
}

/** Per-key limits in events per second; 0 means unlimited. */
export class RateLimits {
  constructor(
    readonly defaultPerSecond: number,
    readonly overrides: ReadonlyMap<string, number> = new Map(),
  ) {}

  limitFor(key: string): number {
    return this.overrides.get(key) ?? this.defaultPerSecond;
  }
}
