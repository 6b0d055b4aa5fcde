import { isRecord } from './json';
import { CAPTURE_LIMITS } from './limits';
import { originOf } from './page-origin';
import type { Outcome } from './retry';
import { SluiceSdkError, type RejectedEvent } from './sdk-error';
import type { TransportResponse } from './transport';
import type { WireEvent } from './types';

/** One request and what came of it: what `requestProblem` reads. */
export interface RequestResult {
  /** The collector's URL the request went to. */
  readonly endpoint: string;
  readonly events: readonly WireEvent[];
  /** Whether the request carried an `X-Api-Key`. */
  readonly apiKeySent: boolean;
  readonly outcome: Outcome;
  /** The answer, or `undefined` when none came. */
  readonly response: TransportResponse | undefined;
  /** What the transport threw, when it threw. */
  readonly failure: unknown;
  /** The origin of the page the SDK runs in; `undefined` outside a browser. */
  readonly pageOrigin?: string | undefined;
}

/** Examples of rejected events a message names; the error's `rejected` holds them all. */
const MESSAGE_EXAMPLES = 3;

/** The problem a request's result shows the host, or `undefined` when it went as it should (2xx, 429). */
export function requestProblem(r: RequestResult): SluiceSdkError | undefined {
  const { outcome } = r;
  const n = r.events.length;
  switch (outcome.kind) {
    case 'accepted':
    case 'throttled':
      return outcome.rejected.length > 0 ? rejectedProblem(r, outcome.rejected) : undefined;
    case 'retryable': {
      const status = answeredStatus(r.response);
      if (status === undefined) {
        return new SluiceSdkError({
          code: 'unreachable',
          message: `collector unreachable at ${r.endpoint}: ${describeFailure(r.failure)}; ${events(n)} kept, retried with backoff${corsHint(r)}`,
          events: n,
          retrying: true,
          cause: r.failure,
        });
      }
      return new SluiceSdkError({
        code: 'server_error',
        message: `the collector answered ${status}${answerDetail(r.response)}; ${events(n)} kept, retried${r.response?.retryAfter ? ` after Retry-After (${r.response.retryAfter})` : ' with backoff'}`,
        status,
        events: n,
        retrying: true,
      });
    }
    case 'failed': {
      const status = outcome.status;
      if (status === 401 || status === 403) {
        const fix = r.apiKeySent
          ? `check the client's apiKey (an ingest key of app "${r.events[0]?.source.app ?? ''}")`
          : `the collector has auth on: set the client's apiKey to an ingest key`;
        return new SluiceSdkError({
          code: 'unauthorized',
          message: `the collector refused the API key (${status}${answerDetail(r.response)}); ${events(n)} dropped: ${fix}`,
          status,
          events: n,
          retrying: false,
        });
      }
      return new SluiceSdkError({
        code: 'request_refused',
        message: `POST ${r.endpoint} answered ${status}${answerDetail(r.response)}; ${events(n)} dropped (resending cannot help)${refusalHint(status)}`,
        status,
        events: n,
        retrying: false,
      });
    }
  }
}

/** The problem of an event refused at capture (`method` is the client method that refused it). */
export function captureProblem(method: string, name: unknown, reason: CaptureRefusal): SluiceSdkError {
  const shown = typeof name === 'string' ? name : String(name);
  return new SluiceSdkError({
    code: 'invalid_event',
    message: `${method}(${JSON.stringify(shown)}) dropped at capture: ${CAPTURE_REFUSALS[reason]}`,
    events: 1,
    retrying: false,
    rejected: [{ name: shown, reason }],
  });
}

/** Why an event is refused at capture: the collector's reason codes for the same faults. */
export type CaptureRefusal = 'name_invalid' | 'name_too_long' | 'value_invalid' | 'value_out_of_range';

const CAPTURE_REFUSALS: Readonly<Record<CaptureRefusal, string>> = {
  name_invalid: 'the name must be a dotted identifier (letters, digits, _ and - between dots)',
  name_too_long: `the name is longer than ${CAPTURE_LIMITS.maxNameLength} characters (an aggregated metric's with "_summary")`,
  value_invalid: 'the value must be a finite number',
  value_out_of_range: `the value must lie within ±${CAPTURE_LIMITS.maxMetricMagnitude} (rollup sums of larger values overflow)`,
};

/** The problem of options that cannot make a working client. */
export function optionsProblem(reason: string): SluiceSdkError {
  return new SluiceSdkError({
    code: 'invalid_options',
    message: `client disabled: ${reason}`,
    events: 0,
    retrying: false,
  });
}

function rejectedProblem(r: RequestResult, indices: readonly number[]): SluiceSdkError {
  const reasons = rejectionsByIndex(r.response?.body);
  const rejected = indices.map((i): RejectedEvent => {
    const detail = reasons.get(i);
    const event: RejectedEvent = { name: r.events[i]?.name ?? '', reason: detail?.reason ?? 'unknown' };
    return {
      ...event,
      ...(detail?.field !== undefined && { field: detail.field }),
      ...(detail?.hint !== undefined && { hint: detail.hint }),
    };
  });
  const examples = rejected
    .slice(0, MESSAGE_EXAMPLES)
    .map((e) => `${e.name}: ${e.reason}${e.field ? ` (${e.field})` : ''}`)
    .join('; ');
  const more = rejected.length > MESSAGE_EXAMPLES ? '; …' : '';
  // The collector's hint for each reason, once (it sends one on the first event of each reason).
  const hints = [...new Set(rejected.flatMap((e) => (e.hint === undefined ? [] : [e.hint])))];
  const fix = hints.length === 0 ? '' : `: ${hints.join('; ')}`;
  return new SluiceSdkError({
    code: 'events_rejected',
    message: `the collector rejected ${rejected.length} of ${events(r.events.length)} as invalid (${examples}${more}); they are dropped${fix}`,
    status: r.response?.status,
    events: rejected.length,
    retrying: false,
    rejected,
  });
}

interface Rejection {
  readonly reason: string;
  readonly field: string | undefined;
  readonly hint: string | undefined;
}

/** `index → {reason, field, hint}` of a body's `rejected` list; malformed entries are skipped. */
function rejectionsByIndex(body: unknown): Map<number, Rejection> {
  const out = new Map<number, Rejection>();
  const list = isRecord(body) && Array.isArray(body.rejected) ? (body.rejected as unknown[]) : [];
  for (const entry of list) {
    if (!isRecord(entry) || typeof entry.index !== 'number') continue;
    out.set(entry.index, {
      reason: typeof entry.reason === 'string' ? entry.reason : 'unknown',
      field: typeof entry.field === 'string' ? entry.field : undefined,
      hint: typeof entry.hint === 'string' ? entry.hint : undefined,
    });
  }
  return out;
}

function answeredStatus(response: TransportResponse | undefined): number | undefined {
  return typeof response === 'object' && response !== null && typeof response.status === 'number'
    ? response.status
    : undefined;
}

/** ` unauthorized: API key missing or not valid.`: the collector's error code and message, when it sent them. */
function answerDetail(response: TransportResponse | undefined): string {
  const body = response?.body;
  if (!isRecord(body)) return '';
  const code = typeof body.error === 'string' ? ` ${body.error}` : '';
  const message = typeof body.message === 'string' ? `: ${body.message}` : '';
  return code + message;
}

function refusalHint(status: number): string {
  if (status === 404 || status === 405) return `; is endpoint the collector's POST /v1/events URL?`;
  if (status === 413) return '; lower batchSize or maxBatchBytes to what the collector takes';
  return '';
}

/**
 * A browser hides why a fetch to another origin failed: a collector that does not allow the page's
 * origin (CORS) fails exactly as one that is down. Said only then; a timeout is not CORS.
 */
function corsHint(r: RequestResult): string {
  if (r.pageOrigin === undefined || isAbort(r.failure)) return '';
  const collector = originOf(r.endpoint, r.pageOrigin);
  if (collector === undefined || collector === r.pageOrigin) return '';
  return (
    `; the page (${r.pageOrigin}) and the collector (${collector}) are on different origins, and a browser` +
    ` reports a CORS refusal the same way: if the collector is up, set SLUICE_CORS_ORIGINS=${r.pageOrigin} on it`
  );
}

function isAbort(failure: unknown): boolean {
  return (
    typeof failure === 'object' && failure !== null && (failure as { name?: unknown }).name === 'AbortError'
  );
}

/** What a transport threw, with the cause Node's fetch hides behind "fetch failed". */
function describeFailure(failure: unknown): string {
  if (failure === undefined) return 'no answer';
  if (!(failure instanceof Error)) return String(failure);
  const cause = (failure as { cause?: unknown }).cause;
  return cause instanceof Error && cause.message !== ''
    ? `${failure.message} (${cause.message})`
    : failure.message;
}

function events(n: number): string {
  return n === 1 ? '1 event' : `${n} events`;
}
