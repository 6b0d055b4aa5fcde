/**
 * Dynamic sampling: the share of non-error events the SDK keeps, set by the collector's answers
 * (docs/sdk.md, "Sampling"). Errors are never sampled out dynamically; the client applies only the
 * static rate to them. The dynamic rate multiplies the static `sampleRate` of the config.
 *
 * - **Advice.** A collector that knows what it can take says so in its answers (`sample_rate`:
 *   the share of the events this app captures that it can take now). The SDK follows it: the
 *   effective rate becomes the advised share (the dynamic rate is advice ÷ static rate, at most 1),
 *   and every answer that carries advice sets it again, up or down.
 * - **Without advice** (a 429 from a proxy, a collector that does not advise), 429s alone drive
 *   it, stepping between the seed's levels 1 → 0.5 → 0.1:
 *   - a 429 that took nothing steps down a level (above 0.5 → 0.5, else 0.1) and resets the
 *     success streak;
 *   - a 429 that took part of the batch lowers the rate in proportion to what it refused (× the
 *     share taken), never below 0.1: the collector took what its budget allowed, which is not the
 *     same as "429 again";
 *   - a success (any 2xx) adds one to the streak: below 0.5, a streak of 10 raises it to 0.5; below
 *     1, a streak of 30 raises it to 1. A step up resets the streak, so from 0.1 back to 1 takes
 *     10 + 30 consecutive successes;
 *   - any other outcome (network error, 5xx, 4xx other than 429, and a 429 `overloaded` that
 *     refused the request unread) breaks the streak but leaves the rate: only a 429 that read the
 *     request means "send less".
 */

/** The levels the rate steps between without advice, highest first. */
export const RATE_LEVELS = [1, 0.5, 0.1] as const;

/** Consecutive successes (without advice) to step up to 0.5 from below it, and to 1 from below it. */
const STEPS_UP = [
  { below: 0.5, after: 10, to: 0.5 },
  { below: 1, after: 30, to: 1 },
] as const;

/** The lowest dynamic rate an advice can set: a collector advising less still gets one event in 1,000. */
const MIN_ADVISED = 0.001;

export class DynamicSampler {
  private current = 1;
  private successes = 0;

  /** The static `sampleRate` of the config, which advice is a share of. */
  constructor(private readonly staticRate: number) {}

  /** The current dynamic rate, in (0, 1]. */
  get rate(): number {
    return this.current;
  }

  /** Consecutive successes (without advice) since the last 429, failure or change of rate. */
  get streak(): number {
    return this.successes;
  }

  /** The collector advised keeping `share` of what the app captures (an answer's `sample_rate`). */
  onAdvice(share: number): void {
    this.successes = 0;
    if (this.staticRate <= 0) return;
    this.current = Math.min(1, Math.max(MIN_ADVISED, share / this.staticRate));
  }

  /** A 2xx answer without advice. */
  onSuccess(): void {
    this.successes++;
    for (const step of STEPS_UP) {
      if (this.current < step.below) {
        if (this.successes >= step.after) {
          this.current = step.to;
          this.successes = 0;
        }
        return;
      }
    }
  }

  /** A 429 answer without advice; `takenShare`: the share of the batch's valid events it took, 0..1. */
  onThrottled(takenShare: number): void {
    this.successes = 0;
    const floor = RATE_LEVELS[RATE_LEVELS.length - 1] as number;
    if (!(takenShare > 0)) {
      this.current = this.current > 0.5 ? 0.5 : floor;
      return;
    }
    this.current = Math.max(Math.min(floor, this.current), this.current * Math.min(1, takenShare));
  }

  /** Any other outcome: a network error, 5xx, a 4xx other than 429, or a 429 that read nothing. */
  onFailure(): void {
    this.successes = 0;
  }
}
