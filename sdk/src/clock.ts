/** Opaque handle of a scheduled timer. */
export type TimerHandle = unknown;

export interface TimerOptions {
  /**
   * Keep the process alive until the timer fires or is cleared (Node); a
   * runtime without that notion ignores it. Default false: an idle SDK never
   * holds a process open.
   */
  readonly keepAlive?: boolean;
}

/**
 * Time and timers, injectable so tests drive the SDK with a fake clock.
 * The SDK never calls `Date.now()` or `setTimeout` except through one.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Runs `fn` once after `ms` milliseconds. */
  setTimeout(fn: () => void, ms: number, options?: TimerOptions): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/**
 * The runtime's clock. Timers are `unref`'d where the runtime supports it
 * (Node) unless `keepAlive` is set: a batch waiting for its interval or a
 * backoff never keeps a process alive, a pending `flush()` or `close()` does.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms, options) => {
    const handle: unknown = globalThis.setTimeout(fn, ms);
    const unref = (handle as { unref?: unknown } | null)?.unref;
    if (options?.keepAlive !== true && typeof unref === 'function') unref.call(handle);
    return handle;
  },
  clearTimeout: (handle) => globalThis.clearTimeout(handle as Parameters<typeof clearTimeout>[0]),
};
