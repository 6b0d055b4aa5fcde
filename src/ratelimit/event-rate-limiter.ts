/** Where a rate-limit decision was counted (`redis` includes grants spent from a lease of Redis budget). */
export type LimiterStore = 'memory' | 'redis' | 'insurance';

/** Who is counted: `key` names the budget (an app, or an API key id); `app`'s limit applies. */
export interface LimitSubject {
  readonly key: string;
  readonly app: string;
}

/** One subject's share of a request. */
export interface LimitAsk {
  readonly subject: LimitSubject;
  /** Events the request carries for this subject (non-error events only). */
  readonly events: number;
  /**
   * `partial` (`POST /v1/events`): take what the budget still holds, in request order; the client
   * resends the rest. `whole` (fronts without a per-record retry list, such as OTLP): take all of
   * them while the budget is positive, leaving a debt that later windows repay, else none.
   */
  readonly mode: 'partial' | 'whole';
}

export interface LimitGrant {
  /** Events spent from the budget, 0..ask.events. */
  readonly granted: number;
  /** When not all were granted: how long until the budget holds the rest, or as much of it as it can (milliseconds). */
  readonly retryAfterMs: number;
  readonly store: LimiterStore;
}

/**
 * Counts events per key (an app, or an API key id) at the app's limit per second, with a burst
 * allowance of `SLUICE_RATE_LIMIT_BURST` of it (docs/ARCHITECTURE.md, "Rate limits"). A request
 * larger than the budget is admitted in part, never refused forever: a client that resends its
 * `throttled` events after `Retry-After` gets through at the limit's rate.
 */
export interface EventRateLimiter {
  /** Decides every subject of one request at once (at most one Redis round trip for all of them). */
  spend(asks: readonly LimitAsk[]): Promise<LimitGrant[]>;
  /** Gives back events granted to a request that could not be queued after all. */
  refund(subject: LimitSubject, events: number): void;
  close(): Promise<void>;
}

/**
 * Per-key limits in events per second (0 means unlimited), and the burst allowance: how much of
 * its limit an app may send at once (docs/ARCHITECTURE.md, "Rate limits").
 */
export class RateLimits {
  constructor(
    readonly defaultPerSecond: number,
    readonly overrides: ReadonlyMap<string, number>,
    /** Seconds of its limit an app may send at once (`SLUICE_RATE_LIMIT_BURST`, whole seconds, ≥ 1). */
    readonly burstSeconds: number,
  ) {}

  limitFor(key: string): number {
    return this.overrides.get(key) ?? this.defaultPerSecond;
  }

  /** Most events `key` may send at once: `burstSeconds` of its limit (0 when unlimited). */
  burstFor(key: string): number {
    return this.limitFor(key) * this.burstSeconds;
  }
}
