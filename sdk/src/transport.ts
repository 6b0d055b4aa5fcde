import type { WireEvent } from './types';

/** One POST of a batch. */
export interface TransportRequest {
  /** The batch, in body order: index `i` in the collector's answer refers to `events[i]`. */
  readonly events: readonly WireEvent[];
  /** `{"events":[…]}` as JSON text, or its gzip bytes when `headers['content-encoding']` is `gzip`. */
  readonly body: string | Uint8Array<ArrayBuffer>;
  /** Lower-case header names: `content-type`, maybe `content-encoding`, `x-api-key`. */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * The page is being hidden or unloaded: the request must outlive it
   * (`fetch` with `keepalive`, else `navigator.sendBeacon`). The body is then
   * uncompressed JSON of at most 64 KiB, and `send` must start the request
   * before it returns (a page being unloaded runs no later task).
   */
  readonly keepalive: boolean;
}

/** The collector's answer. A network error is a rejected `send` instead. */
export interface TransportResponse {
  readonly status: number;
  /** The `Retry-After` header, as sent (seconds or an HTTP date). */
  readonly retryAfter?: string | null;
  /** The parsed JSON body, when there was one. */
  readonly body?: unknown;
  /**
   * The request left but no answer can come (`sendBeacon`): its events count
   * as sent, and the sampler learns nothing from it.
   */
  readonly unconfirmed?: boolean;
}

/** Sends one batch. The default is `fetchTransport(endpoint)`; tests and proxies plug in here. */
export interface Transport {
  send(request: TransportRequest): Promise<TransportResponse>;
}

/** Chromium's budget for the bodies of keepalive requests in flight (and for a beacon). */
export const KEEPALIVE_MAX_BYTES = 64 * 1024;

/**
 * POSTs to `endpoint` with `fetch`. A request not answered within
 * `timeoutMs` is aborted (a network error, so it is retried). Keepalive
 * requests fall back to `navigator.sendBeacon` where `fetch` refuses them.
 */
export function fetchTransport(endpoint: string, timeoutMs = 10_000): Transport {
  return {
    send(request) {
      if (request.keepalive) return sendKeepalive(endpoint, request);
      return sendFetch(endpoint, request, timeoutMs);
    },
  };
}

async function sendFetch(
  endpoint: string,
  request: TransportRequest,
  timeoutMs: number,
): Promise<TransportResponse> {
  const abort = typeof AbortController === 'function' ? new AbortController() : undefined;
  const timer = abort ? setTimeout(() => abort.abort(), timeoutMs) : undefined;
  try {
    const res = await fetch(endpoint, {
      method: 'POST',
      headers: request.headers,
      body: request.body,
      signal: abort?.signal,
    });
    return await readResponse(res);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

function sendKeepalive(endpoint: string, request: TransportRequest): Promise<TransportResponse> {
  if (typeof fetch !== 'function') return sendBeacon(endpoint, request);
  let pending: Promise<Response>;
  try {
    // Started synchronously: the page may run no further task after this one.
    pending = fetch(endpoint, {
      method: 'POST',
      headers: request.headers,
      body: request.body,
      keepalive: true,
    });
  } catch {
    return sendBeacon(endpoint, request);
  }
  // Chromium rejects a keepalive fetch over its 64 KiB budget at once; a beacon may still fit.
  return pending.then(readResponse, (err: unknown) => sendBeacon(endpoint, request, err));
}

/**
 * `navigator.sendBeacon`: cannot carry headers, so no `X-Api-Key` and no
 * gzip; the body goes as an `application/json` Blob (same-origin, or a
 * collector that allows it by CORS).
 */
async function sendBeacon(
  endpoint: string,
  request: TransportRequest,
  cause?: unknown,
): Promise<TransportResponse> {
  const nav = typeof navigator !== 'undefined' ? navigator : undefined;
  const canBeacon = nav !== undefined && typeof nav.sendBeacon === 'function' && typeof Blob === 'function';
  if (canBeacon && typeof request.body === 'string') {
    if (nav.sendBeacon(endpoint, new Blob([request.body], { type: 'application/json' }))) {
      return { status: 202, unconfirmed: true };
    }
  }
  throw cause ?? new Error('no way to send a keepalive request');
}

async function readResponse(res: Response): Promise<TransportResponse> {
  let body: unknown;
  try {
    const text = await res.text();
    body = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    body = undefined; // a proxy's HTML error page: the status alone decides
  }
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body };
}
