import type { Logger } from '../log/logger';
import { backoffDelay } from '../writer/backoff';

/**
 * Retries a start-up step (e.g. migrations while the database comes up) for
 * at most `deadlineMs` (milliseconds), then rethrows the last error: a
 * collector never hangs forever on a dead dependency at start. An error for
 * which `fatal` is true (no retry can fix it) is rethrown at once.
 */
export async function retryUntil<T>(
  what: string,
  step: () => Promise<T>,
  deadlineMs: number,
  logger: Logger,
  fatal: (err: unknown) => boolean = () => false,
): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await step();
    } catch (err) {
      const delay = backoffDelay(attempt, { baseMs: 200, maxMs: 3000 });
      if (fatal(err) || Date.now() + delay > deadline) throw err;
      logger.warn({ err, attempt, retryInMs: delay }, `${what} failed; retrying`);
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

/** Longest quiet time between two log lines of the same failure (milliseconds). */
const REPEAT_LOG_MS = 30_000;

export interface KeepTryingOptions {
  readonly logger: Logger;
  /** Aborted at shutdown: the wait ends at once and `keepTrying` resolves null. */
  readonly signal: AbortSignal;
  /** An error no retry can fix: rethrown at once. */
  readonly fatal?: (err: unknown) => boolean;
  /** What to log about a failure (default: the error). */
  readonly describe?: (err: unknown) => { readonly fields: object; readonly message: string };
}

/**
 * Retries a start-up step that waits on another service (NATS, the stream's servers) until it
 * succeeds, with backoff from 200 ms to 3 s, for as long as it takes: the process is already
 * listening and says "not ready" meanwhile, so an orchestrator sees a live process waiting, not
 * one that exits and restarts. Logged once when it starts failing, again when the reason changes
 * or every 30 s with the attempt count, and once when it succeeds: an outage is a few lines.
 */
export async function keepTrying<T>(
  what: string,
  step: () => Promise<T>,
  o: KeepTryingOptions,
): Promise<T | null> {
  let lastReason: string | null = null;
  let lastLoggedAt = 0;
  for (let attempt = 0; !o.signal.aborted; attempt++) {
    try {
      const result = await step();
      if (attempt > 0) o.logger.info({ attempts: attempt + 1 }, `${what}: done`);
      return result;
    } catch (err) {
      if (o.fatal?.(err)) throw err;
      const { fields, message } = o.describe?.(err) ?? {
        fields: { err },
        message: err instanceof Error ? err.message : String(err),
      };
      const now = Date.now();
      if (message !== lastReason || now - lastLoggedAt >= REPEAT_LOG_MS) {
        o.logger.warn({ ...fields, attempts: attempt + 1 }, `${what} failed; retrying: ${message}`);
        lastReason = message;
        lastLoggedAt = now;
      }
      await abortableSleep(backoffDelay(attempt, { baseMs: 200, maxMs: 3000 }), o.signal);
    }
  }
  return null;
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
