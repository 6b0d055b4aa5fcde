import type { Logger } from '../log/logger';
import { backoffDelay } from '../pipeline/backoff';

/**
 * Retries a start-up step (e.g. migrations while the database comes up) for
 * at most `deadlineMs` (milliseconds), then rethrows the last error: a
 * collector never hangs forever on a dead dependency at start.
 */
export async function retryUntil<T>(
  what: string,
  step: () => Promise<T>,
  deadlineMs: number,
  logger: Logger,
): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await step();
    } catch (err) {
      const delay = backoffDelay(attempt, { baseMs: 200, maxMs: 3000 });
      if (Date.now() + delay > deadline) throw err;
      logger.warn({ err, attempt, retryInMs: delay }, `${what} failed; retrying`);
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}
