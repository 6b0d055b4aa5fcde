import { systemClock, type Clock } from './clock';
import type { SluiceSdkError } from './sdk-error';
import type { BufferStore } from './store';
import { fetchTransport, type Transport } from './transport';

/** Which metrics aggregate: every one, those named, or those a predicate picks. */
export type AggregatedMetrics = 'all' | readonly string[] | ((name: string) => boolean);

export interface AggregationOptions {
  /** Window length (milliseconds); windows are aligned to multiples of it since the epoch. Default 5000. */
  readonly windowMs?: number;
  /** Which metric names aggregate; the others leave one event per sample. Default `'all'`. */
  readonly metrics?: AggregatedMetrics;
}

export interface BufferOptions {
  /** Most events held while waiting to be sent (in flight not counted). Default 10000. */
  readonly maxEvents?: number;
  /** Most estimated JSON characters held (in flight not counted). Default 2 MiB (2097152). */
  readonly maxBytes?: number;
}

export interface RetryOptions {
  /** Backoff ceiling of the first retry (milliseconds); it doubles per consecutive failure. Default 500. */
  readonly baseMs?: number;
  /** Largest backoff ceiling (milliseconds). Default 30000. */
  readonly maxMs?: number;
}

export interface ClientOptions {
  /** URL of the collector's `POST /v1/events`, e.g. `https://sluice.example.com/v1/events`. Required. */
  readonly endpoint: string;
  /** `source.app` of every event. Required, non-empty. */
  readonly app: string;
  /** `source.version`. Default: omitted. */
  readonly version?: string;
  /** `source.env`, e.g. `production`. Default: omitted. */
  readonly env?: string;
  /** Sent as `X-Api-Key` when the collector has auth on. Default: none. */
  readonly apiKey?: string;
  /**
   * Static share of events kept, 0..1, for every type including errors; the
   * dynamic rate (1, 0.5, 0.1) multiplies it for all types but errors. Default 1.
   */
  readonly sampleRate?: number;
  /**
   * Most events per request (1..1000, the collector's default cap); a full
   * batch is sent at once. A 429 does not shrink batches: the collector takes
   * what the budget allows and the SDK resends only the rest. Default 100.
   */
  readonly batchSize?: number;
  /** Longest an event waits in the buffer before its batch is sent (milliseconds). Default 5000. */
  readonly flushIntervalMs?: number;
  /** Most estimated JSON characters per request, under the collector's 1 MiB body limit. Default 512 KiB (524288). */
  readonly maxBatchBytes?: number;
  /** Metric aggregation into `<name>_summary` events; `false` sends every sample. Default: on, 5 s windows, all metrics. */
  readonly aggregation?: AggregationOptions | false;
  /** Bounds of the offline buffer. */
  readonly buffer?: BufferOptions;
  /** Backoff after network errors, 5xx and 429. */
  readonly retry?: RetryOptions;
  /** gzip request bodies of 1 KiB and more where `CompressionStream` exists. Default true. */
  readonly gzip?: boolean;
  /** Saves the buffer across restarts, e.g. `localStorageStore()` or (Node) `fileStore(path)`. Default: none. */
  readonly persistence?: BufferStore;
  /** Sends batches. Default `fetchTransport(endpoint)`. */
  readonly transport?: Transport;
  /** Time and timers. Default `systemClock`. */
  readonly clock?: Clock;
  /** Uniform random numbers in [0, 1) for sampling and jitter. Default `Math.random`. */
  readonly random?: () => number;
  /** In a browser, flush with `keepalive` / `sendBeacon` on `visibilitychange` to hidden and `pagehide`. Default true. */
  readonly pageHooks?: boolean;
  /**
   * Receives every problem: a refused API key (401/403), a refused request (other 4xx),
   * events the collector rejected as invalid, an event refused at capture, an unreachable
   * collector or a 5xx (`error.retrying`: the events are kept). Setting it replaces the
   * default console warnings. A throw or a rejection from it is counted in
   * `stats().internalErrors`. Default: none, and the first problem of each kind is printed
   * once with `console.warn`.
   */
  readonly onError?: (error: SluiceSdkError) => void;
  /** Prints every problem (`console.warn`) and every request's outcome (`console.debug`). Default false. */
  readonly debug?: boolean;
}

/** Every option with its default applied and its range enforced. */
export interface ResolvedOptions {
  readonly endpoint: string;
  readonly app: string;
  readonly version: string | undefined;
  readonly env: string | undefined;
  readonly apiKey: string | undefined;
  readonly sampleRate: number;
  readonly batchSize: number;
  readonly flushIntervalMs: number;
  readonly maxBatchBytes: number;
  readonly aggregation: { readonly windowMs: number; readonly metrics: AggregatedMetrics } | undefined;
  readonly maxEvents: number;
  readonly maxBytes: number;
  readonly retry: { readonly baseMs: number; readonly maxMs: number };
  readonly gzip: boolean;
  readonly persistence: BufferStore | undefined;
  readonly transport: Transport;
  readonly clock: Clock;
  readonly random: () => number;
  readonly pageHooks: boolean;
  readonly onError: ((error: SluiceSdkError) => void) | undefined;
  readonly debug: boolean;
}

/** Most events per request the collector takes by default (`SLUICE_MAX_EVENTS_PER_REQUEST`). */
const MAX_BATCH_SIZE = 1000;

function num(v: unknown, fallback: number, min: number, max: number): number {
  return typeof v === 'number' && Number.isFinite(v) ? Math.min(max, Math.max(min, v)) : fallback;
}

function int(v: unknown, fallback: number, min: number, max: number): number {
  return Math.floor(num(v, fallback, min, max));
}

function optionalString(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

/**
 * Applies defaults and clamps numbers into range. Returns a reason instead
 * of throwing when the options cannot make a working client: the host app
 * must never see a throw from the SDK.
 */
export function resolveOptions(options: ClientOptions): ResolvedOptions | { readonly invalid: string } {
  if (typeof options !== 'object' || options === null) return { invalid: 'options must be an object' };
  const { endpoint, app } = options;
  if (typeof endpoint !== 'string' || endpoint.length === 0) return { invalid: 'endpoint must be a URL' };
  if (typeof app !== 'string' || app.length === 0) return { invalid: 'app must be a non-empty string' };
  const agg = options.aggregation;
  const retryBase = int(options.retry?.baseMs, 500, 1, 3_600_000);
  return {
    endpoint,
    app,
    version: optionalString(options.version),
    env: optionalString(options.env),
    apiKey: optionalString(options.apiKey),
    sampleRate: num(options.sampleRate, 1, 0, 1),
    batchSize: int(options.batchSize, 100, 1, MAX_BATCH_SIZE),
    flushIntervalMs: int(options.flushIntervalMs, 5000, 0, 86_400_000),
    maxBatchBytes: int(options.maxBatchBytes, 512 * 1024, 1024, 64 * 1024 * 1024),
    aggregation:
      agg === false
        ? undefined
        : { windowMs: int(agg?.windowMs, 5000, 1, 86_400_000), metrics: agg?.metrics ?? 'all' },
    maxEvents: int(options.buffer?.maxEvents, 10_000, 1, 10_000_000),
    maxBytes: int(options.buffer?.maxBytes, 2 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    retry: { baseMs: retryBase, maxMs: int(options.retry?.maxMs, 30_000, retryBase, 3_600_000) },
    gzip: options.gzip !== false,
    persistence: options.persistence,
    transport: options.transport ?? fetchTransport(endpoint),
    clock: options.clock ?? systemClock,
    random: typeof options.random === 'function' ? options.random : Math.random,
    pageHooks: options.pageHooks !== false,
    onError: typeof options.onError === 'function' ? options.onError : undefined,
    debug: options.debug === true,
  };
}
