import { gzipSync } from 'node:zlib';

export interface IngestAnswer {
  readonly status: number;
  readonly body: {
    accepted?: number;
    rejected?: Array<{ index: number; reason: string; field?: string }>;
    throttled?: number[];
    error?: string;
    message?: string;
    /** The sampling advice for the request's one app (docs/http-api.md, "Sampling advice"). */
    sample_rate?: number;
    sample_rates?: Record<string, number>;
  };
  readonly headers: Headers;
}

/** POSTs `{"events": …}` (or a raw body) to a collector. */
export async function postEvents(
  baseUrl: string,
  events: unknown,
  opts: {
    gzip?: boolean;
    headers?: Record<string, string>;
    raw?: Buffer | string;
    signal?: AbortSignal;
  } = {},
): Promise<IngestAnswer> {
  const json = opts.raw ?? JSON.stringify({ events });
  const body = opts.gzip ? gzipSync(json) : json;
  const headers: Record<string, string> = { 'content-type': 'application/json', ...opts.headers };
  if (opts.gzip) headers['content-encoding'] = 'gzip';
  const res = await fetch(`${baseUrl}/v1/events`, {
    method: 'POST',
    headers,
    body: body as unknown as BodyInit,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : {}, headers: res.headers };
}

/**
 * `postEvents`, sent again while the collector sheds it unread (429 `overloaded`: it took nothing),
 * after its `Retry-After`, at most `attempts` times: what a client does. On a box whose cores other
 * test files share, a collector sheds now and then; a test of what it does with a request it read
 * sends with this.
 */
export async function postEventsRead(
  baseUrl: string,
  events: unknown,
  opts: Parameters<typeof postEvents>[2] = {},
  attempts = 20,
): Promise<IngestAnswer> {
  for (let i = 1; ; i++) {
    const answer = await postEvents(baseUrl, events, opts);
    if (answer.status !== 429 || answer.body.error !== 'overloaded' || i === attempts) return answer;
    const wait = Number(answer.headers.get('retry-after') ?? 1);
    await new Promise((r) => setTimeout(r, 1000 * (Number.isFinite(wait) ? wait : 1)));
  }
}

export async function getJson(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(url, { headers });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

/** Polls `check` until it returns a truthy value or `timeoutMs` passes (then throws with `what`). */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T> | T,
  timeoutMs = 10_000,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * The ids of `batch` that `answer` acknowledged: on a 202, or a 429 with a `throttled` list, every
 * event neither throttled nor rejected. A 429 without the list (`overloaded`) took nothing.
 */
export function acknowledgedIds(
  batch: ReadonlyArray<Record<string, unknown>>,
  answer: IngestAnswer,
): string[] {
  const { throttled, rejected } = answer.body;
  if (answer.status !== 202 && !(answer.status === 429 && throttled !== undefined)) return [];
  const notTaken = new Set([...(throttled ?? []), ...(rejected ?? []).map((r) => r.index)]);
  return batch.flatMap((e, i) => (notTaken.has(i) ? [] : [e.id as string]));
}
