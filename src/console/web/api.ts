import type { MetricPoint } from '../../storage/port';

/*
 * The console's only way to the data: the public read API and GET /pipeline, on this origin, with
 * the read key (when one was given) on every call. Everything the console shows, a script can
 * read the same way.
 */

const KEY_ITEM = 'sluice.console.readKey';

/** An answer other than 2xx, with the API's error code and message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Seconds, from `Retry-After`. */
    readonly retryAfter: number | null,
  ) {
    super(message);
  }
}

let onKeyNeeded: (refused: string | null) => void = () => undefined;

/**
 * Called when the API answers 401 with the key the call carried (null: none): the console asks for
 * a read key, saying why the one it had was refused.
 */
export function whenKeyNeeded(handler: (refused: string | null) => void): void {
  onKeyNeeded = handler;
}

export function readKey(): string | null {
  return sessionStorage.getItem(KEY_ITEM);
}

/** Keeps the key for this tab only (sessionStorage): closing the tab forgets it. */
export function setReadKey(key: string | null): void {
  if (key === null) sessionStorage.removeItem(KEY_ITEM);
  else sessionStorage.setItem(KEY_ITEM, key);
}

export type Query = Readonly<Record<string, string | number | undefined>>;

export function pathWith(path: string, query: Query = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s === '' ? path : `${path}?${s}`;
}

/** GET `path` as JSON. A 401 asks for a key (and rejects); other failures reject with `ApiError`. */
export async function getJson<T>(path: string, query: Query = {}, signal?: AbortSignal): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const key = readKey();
  if (key !== null) headers.authorization = `Bearer ${key}`;
  const res = await fetch(pathWith(path, query), { headers, cache: 'no-store', signal });
  const text = await res.text();
  let body: unknown;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    body = null;
  }
  if (res.ok) return body as T;
  const err = (body ?? {}) as { error?: string; message?: string };
  const retryAfter = res.headers.get('retry-after');
  const failure = new ApiError(
    res.status,
    err.error ?? 'http_error',
    err.message ?? `${res.status} ${res.statusText}`,
    retryAfter === null ? null : Number(retryAfter),
  );
  if (res.status === 401) onKeyNeeded(key);
  throw failure;
}

/* The answers, as the read API documents them. */

export interface WireEvent {
  readonly id: string;
  readonly type: 'error' | 'lifecycle' | 'metric' | 'log';
  readonly name: string;
  readonly ts: number;
  readonly source: { readonly app: string; readonly version?: string; readonly env?: string };
  readonly value?: number;
  readonly summary?: { count: number; min: number; max: number; sum: number; avg: number };
  readonly error?: { message: string; kind?: string; stack?: string };
  readonly message?: string;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
}

export interface EventsAnswer {
  readonly events: WireEvent[];
  readonly next_cursor: string | null;
}

/** A point as the read API answers it: the storage port's shape, serialised. */
export type { MetricPoint };

export interface MetricsAnswer {
  readonly name: string;
  readonly resolution: string;
  readonly points: MetricPoint[];
  readonly next_cursor: string | null;
}

export interface AppRow {
  readonly app: string;
  readonly last_seen: number;
  readonly events: number;
  readonly events_capped: boolean;
  readonly metric_samples: number;
}

export interface AppsAnswer {
  readonly from: number;
  readonly to: number;
  readonly apps: AppRow[];
  readonly next_cursor: string | null;
}

export interface MetricNameRow {
  readonly name: string;
  readonly kinds: string[];
  readonly apps: string[];
  readonly apps_capped: boolean;
}

export interface MetricNamesAnswer {
  readonly names: MetricNameRow[];
  readonly next_cursor: string | null;
}

export interface ErrorGroupsAnswer {
  readonly complete: boolean;
  readonly scanned_from: number;
  /** Groups found; `groups` holds the most recent `limit` of them. */
  readonly total_groups: number;
  readonly groups: Array<{
    fingerprint: string;
    kind: string | null;
    template: string;
    message: string;
    count: number;
    first_seen: number;
    last_seen: number;
    last_id: string;
    /** The first apps of the group; `app_count` says how many there are. */
    apps: string[];
    app_count: number;
  }>;
}

export interface PipelineAnswer {
  readonly at: number;
  readonly started_at: number;
  readonly mode: 'direct' | 'ingest';
  readonly storage: string;
  readonly rates: Record<string, number> | null;
  readonly totals: Record<string, number> | null;
  readonly history: Array<Record<string, number>>;
  readonly lanes: Array<{
    name: string;
    events: number;
    capacity: number;
    bytes: number;
    capacity_bytes: number;
  }>;
  readonly writer: {
    in_flight: number;
    max_in_flight: number;
    drain_per_s: number;
    batches_per_s: number | null;
    events_per_batch: number | null;
    commit_ms_mean: number | null;
    commit_ms_p99: number | null;
    retries_per_s: number | null;
    errors_per_s: number | null;
  } | null;
  readonly queue: {
    stream_messages: number;
    stream_bytes: number;
    stream_max_bytes: number;
    drain_messages_per_s: number;
    pending_acks: number;
  } | null;
  readonly apps: Array<{
    app: string;
    accepted_per_s: number;
    errors_per_s: number;
    throttled_per_s: number;
    limit_per_s: number | null;
    limit_use: number | null;
  }>;
  readonly health: Record<string, string | boolean>;
}
