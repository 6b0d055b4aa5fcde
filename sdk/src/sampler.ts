/**
 * Dynamic sampling driven by HTTP 429 only (docs/ARCHITECTURE.md, first line of defence).
 *
 * Our reading of "1.0 normally; first 429 → 0.5; 429 again while at 0.5 →
 * 0.1; after 10 consecutive successes → 0.5; after 30 consecutive successes
 * → 1.0", which the unit tests pin down transition by transition:
 *
 * - the rate is one of three levels: 1.0, 0.5, 0.1;
 * - a 429 steps down one level (1.0 → 0.5, 0.5 → 0.1; at 0.1 it stays) and
 *   resets the success streak to 0;
 * - a success (any 2xx answer) adds one to the streak. At 0.1 a streak of
 *   10 steps up to 0.5; at 0.5 a streak of 30 steps up to 1.0. A step up
 *   resets the streak, so from 0.1 back to 1.0 takes 10 + 30 = 40
 *   consecutive successes, and from 0.5 (one 429) 30;
 * - any other outcome (network error, 5xx, 4xx other than 429) is not a
 *   success: it breaks the streak (resets it to 0) but leaves the level —
 *   only a 429 means "send less".
 *
 * The rate multiplies the static sample rate of the config; errors are never
 * sampled out dynamically (the client applies only the static rate to them).
 */

/** The levels of the dynamic rate, highest first. */
export const RATE_LEVELS = [1, 0.5, 0.1] as const;
export type RateLevel = (typeof RATE_LEVELS)[number];

/** Consecutive successes needed to step up from each level. */
const STEP_UP_AFTER: Readonly<Record<RateLevel, number>> = { 1: Infinity, 0.5: 30, 0.1: 10 };

export class DynamicSampler {
  private level = 0;
  private successes = 0;

  /** The current dynamic rate: 1, 0.5 or 0.1. */
  get rate(): RateLevel {
    return RATE_LEVELS[this.level]!;
  }

  /** Consecutive successes since the last 429, failure or level change. */
  get streak(): number {
    return this.successes;
  }

  /** A 2xx answer. */
  onSuccess(): void {
    this.successes++;
    if (this.successes >= STEP_UP_AFTER[this.rate]) {
      this.level--;
      this.successes = 0;
    }
  }

  /** A 429 answer. */
  onThrottled(): void {
    this.level = Math.min(this.level + 1, RATE_LEVELS.length - 1);
    this.successes = 0;
  }

  /** Any other outcome: a network error, 5xx, or a 4xx other than 429. */
  onFailure(): void {
    this.successes = 0;
  }
}
