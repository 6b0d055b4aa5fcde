/**
 * Every `Retry-After` the collector sends (seconds), and the clamp they all go through. One home,
 * so a client sees one policy whichever decision refused it (docs/ARCHITECTURE.md, "Where each
 * decision lives").
 */

/** Shortest `Retry-After` (seconds): HTTP's unit; a sooner retry would meet the same state. */
export const RETRY_AFTER_MIN_S = 1;
/** Longest `Retry-After` (seconds): past it, clients' own timeouts drop data rather than wait. */
export const RETRY_AFTER_MAX_S = 30;
/** A request refused unread because the process is saturated: the backlog clears within a second or two. */
export const OVERLOADED_RETRY_AFTER_S = 2;
/** Storage (or JetStream) unreachable, or the process not ready: the health check's interval order. */
export const UNAVAILABLE_RETRY_AFTER_S = 5;
/** Every read connection busy, or a read past its timeout: other reads finish within seconds. */
export const STORAGE_BUSY_RETRY_AFTER_S = 1;
/** This process's bound of unacknowledged publishes reached: acks come back within milliseconds. */
export const PENDING_ACKS_RETRY_AFTER_S = 1;

/**
 * Seconds clamped to [RETRY_AFTER_MIN_S, `maxSeconds`], rounded up. `maxSeconds` is
 * RETRY_AFTER_MAX_S, or lower for a front whose clients give up sooner (OTLP exporters:
 * `SLUICE_OTLP_RETRY_AFTER_MAX`).
 */
export function clampRetryAfter(seconds: number, maxSeconds = RETRY_AFTER_MAX_S): number {
  if (!(seconds > RETRY_AFTER_MIN_S)) return RETRY_AFTER_MIN_S;
  return Math.min(Math.max(RETRY_AFTER_MIN_S, maxSeconds), Math.ceil(seconds));
}

/** A wait given in milliseconds (a rate limiter's "free again in"), as a clamped `Retry-After`. */
export function retryAfterFromMs(ms: number): number {
  return clampRetryAfter(ms / 1000);
}

/**
 * Seconds until a consumer removing `perSecond` items has made room for `needed` more, clamped.
 * Nothing draining (storage or workers down) → the longest wait.
 */
export function retryAfterToDrain(needed: number, perSecond: number): number {
  if (perSecond <= 0) return RETRY_AFTER_MAX_S;
  return clampRetryAfter(Math.max(1, needed) / perSecond);
}
