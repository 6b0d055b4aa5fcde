import { isRecord } from './json';
import type { TransportResponse } from './transport';

/** What one request's answer means for its batch (indices into the batch). */
export type Outcome =
  /**
   * 2xx: all taken except `rejected` (invalid; dropped). Also a 422 `events_rejected`: the
   * collector rejected every event as invalid, so all are `rejected` (dropped, never resent).
   */
  | {
      readonly kind: 'accepted';
      readonly rejected: readonly number[];
      readonly unconfirmed: boolean;
      /** The collector's advised sample rate (`sample_rate`), when the answer carried one. */
      readonly advice: number | undefined;
    }
  /** 429: `throttled` are resent after the wait, `rejected` dropped, the rest were taken. */
  | {
      readonly kind: 'throttled';
      readonly rejected: readonly number[];
      readonly throttled: readonly number[];
      readonly retryAfterMs: number | undefined;
      readonly advice: number | undefined;
      /**
       * The collector refused the request unread (`overloaded`): it was saturated and read nothing
       * of it, so the answer says nothing of this app's rate.
       */
      readonly unread: boolean;
    }
  /** Network error, timeout, 408 or 5xx: the whole batch is resent after the wait. */
  | { readonly kind: 'retryable'; readonly retryAfterMs: number | undefined }
  /** Any other 4xx (400, 401, 413, 415…): resending cannot help; the batch is dropped. */
  | { readonly kind: 'failed'; readonly status: number };

/** Longest `Retry-After` honoured (milliseconds): a misconfigured proxy cannot silence an SDK for days. */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/**
 * Reads the collector's answer to a batch of `size` events. `response` is
 * `undefined` for a network error. Tolerates malformed bodies: indices that
 * are not integers in range are ignored; a 429 without a `throttled` list
 * means every event not rejected is throttled.
 */
export function classify(response: TransportResponse | undefined, size: number, now: number): Outcome {
  if (typeof response !== 'object' || response === null || typeof response.status !== 'number') {
    return { kind: 'retryable', retryAfterMs: undefined }; // no answer, or a transport that returned nonsense
  }
  const { status } = response;
  const body = isRecord(response.body) ? response.body : {};
  const retryAfterMs = parseRetryAfter(response.retryAfter, now);
  if (status >= 200 && status < 300) {
    return {
      kind: 'accepted',
      rejected: rejectedIndices(body, size),
      unconfirmed: response.unconfirmed === true,
      advice: adviceOf(body),
    };
  }
  if (status === 422 && body.error === 'events_rejected') {
    const all: number[] = [];
    for (let i = 0; i < size; i++) all.push(i);
    return { kind: 'accepted', rejected: all, unconfirmed: false, advice: adviceOf(body) };
  }
  if (status === 429) {
    const rejected = rejectedIndices(body, size);
    let throttled: number[];
    const gone = new Set(rejected);
    if (Array.isArray(body.throttled)) {
      throttled = indices(body.throttled, size).filter((i) => !gone.has(i));
    } else {
      throttled = [];
      for (let i = 0; i < size; i++) if (!gone.has(i)) throttled.push(i);
    }
    const unread = body.error === 'overloaded' && !Array.isArray(body.throttled);
    return { kind: 'throttled', rejected, throttled, retryAfterMs, advice: adviceOf(body), unread };
  }
  if (status === 408 || status >= 500 || status < 200 || (status >= 300 && status < 400)) {
    return { kind: 'retryable', retryAfterMs };
  }
  return { kind: 'failed', status };
}

/**
 * `Retry-After` in milliseconds from `now`: delay-seconds or an HTTP date
 * (RFC 9110 §10.2.3); `undefined` when absent or unreadable.
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const trimmed = value.trim();
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(trimmed)) ms = Number(trimmed) * 1000;
  else {
    // An HTTP date names its day and month; a bare "-1" or "2025" is not one.
    const date = /[a-z]/i.test(trimmed) ? Date.parse(trimmed) : NaN;
    if (Number.isNaN(date)) return undefined;
    ms = date - now;
  }
  return Math.min(Math.max(0, Math.ceil(ms)), MAX_RETRY_AFTER_MS);
}

export interface BackoffOptions {
  /** First retry's ceiling (milliseconds). */
  readonly baseMs: number;
  /** Largest ceiling (milliseconds). */
  readonly maxMs: number;
}

/**
 * Capped exponential backoff with full jitter: a delay drawn uniformly from
 * `[0, min(maxMs, baseMs · 2^(attempt-1)))`, `attempt` being the count of
 * consecutive failures (1 for the first). Spreads a fleet of SDKs that
 * failed together over the whole interval.
 */
export function backoffDelay(attempt: number, options: BackoffOptions, random: () => number): number {
  const ceiling = Math.min(options.maxMs, options.baseMs * 2 ** Math.min(Math.max(attempt - 1, 0), 30));
  const r = random();
  return Math.floor(ceiling * (r >= 0 && r < 1 ? r : 0.5));
}

/**
 * When the next attempt may start after a failed one: no earlier than the
 * server's `Retry-After`, and no earlier than the jittered backoff.
 */
export function retryDelay(
  attempt: number,
  retryAfterMs: number | undefined,
  options: BackoffOptions,
  random: () => number,
): number {
  return Math.max(retryAfterMs ?? 0, backoffDelay(attempt, options, random));
}

/** An answer's `sample_rate`, when it is a share in (0, 1]; anything else is no advice. */
function adviceOf(body: Record<string, unknown>): number | undefined {
  const rate = body.sample_rate;
  return typeof rate === 'number' && rate > 0 && rate <= 1 ? rate : undefined;
}

function rejectedIndices(body: Record<string, unknown>, size: number): number[] {
  if (!Array.isArray(body.rejected)) return [];
  return indices(
    body.rejected.map((r: unknown) => (isRecord(r) ? r.index : undefined)),
    size,
  );
}

function indices(raw: readonly unknown[], size: number): number[] {
  const seen = new Set<number>();
  for (const i of raw) if (typeof i === 'number' && Number.isInteger(i) && i >= 0 && i < size) seen.add(i);
  return [...seen].sort((a, b) => a - b);
}
