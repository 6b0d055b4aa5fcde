/** Source of the current time. Domain code takes one instead of calling `Date.now()`. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
