/** Opaque handle of a scheduled timer. */
export type TimerHandle = unknown;

/**
 * Time and timers, injectable so tests drive the SDK with a fake clock.
 * The SDK never calls `Date.now()` or `setTimeout` except through one.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Runs `fn` once after `ms` milliseconds. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/**
 * The runtime's clock. Timers are `unref`'d where the runtime supports it
 * (Node), so a pending flush or backoff never keeps a process alive.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const handle: unknown = globalThis.setTimeout(fn, ms);
    const unref = (handle as { unref?: unknown } | null)?.unref;
    if (typeof unref === 'function') unref.call(handle);
    return handle;
  },
  clearTimeout: (handle) => globalThis.clearTimeout(handle as Parameters<typeof clearTimeout>[0]),
};
