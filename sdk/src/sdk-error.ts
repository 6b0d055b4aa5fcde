/**
 * What went wrong. The first five lose events and need a change on the host's side; the last two
 * pass (the events are kept and retried). docs/sdk.md lists them (a test keeps it in step).
 */
export const SDK_ERROR_CODES = [
  /** 401 or 403: the API key is missing, wrong, or may not write. The batch is dropped. */
  'unauthorized',
  /** Another 4xx but 408 and 429 (400, 404, 413, 415…): resending cannot help. The batch is dropped. */
  'request_refused',
  /** The collector took the request but rejected some of its events as invalid (`rejected`). They are dropped. */
  'events_rejected',
  /** Refused at capture: a name that is not a dotted identifier or is too long, a value that is not a finite number. Dropped. */
  'invalid_event',
  /** The options cannot make a working client (no endpoint, no app): it captures nothing. */
  'invalid_options',
  /** No answer: connection refused, DNS, TLS, timeout. The events are kept and retried with backoff. */
  'unreachable',
  /** A 5xx or 408 answer. The events are kept and retried after `Retry-After` or a backoff. */
  'server_error',
] as const;

export type SdkErrorCode = (typeof SDK_ERROR_CODES)[number];

/** One event the collector (or the SDK, at capture) refused, and why. */
export interface RejectedEvent {
  /** The event's name. */
  readonly name: string;
  /** The collector's rejection reason, e.g. `name_invalid`, `ts_out_of_range`, `app_mismatch`. */
  readonly reason: string;
  /** The offending field, when the collector names one, e.g. `attributes.route`. */
  readonly field?: string;
  /** What to do about it, when the collector says (on the first event of each reason of an answer). */
  readonly hint?: string;
}

export interface SluiceSdkErrorDetails {
  readonly code: SdkErrorCode;
  readonly message: string;
  readonly status?: number;
  readonly events: number;
  readonly retrying: boolean;
  readonly rejected?: readonly RejectedEvent[];
  readonly cause?: unknown;
}

/**
 * A problem the SDK met, as `onError` receives it. Never thrown: the SDK
 * reports it and carries on (no method throws, no promise rejects).
 */
export class SluiceSdkError extends Error {
  override readonly name = 'SluiceSdkError';
  readonly code: SdkErrorCode;
  /** The HTTP status of the collector's answer, when there was one. */
  readonly status: number | undefined;
  /** How many events the problem concerns (dropped, or kept for a retry). */
  readonly events: number;
  /** True when the events are kept and retried (`unreachable`, `server_error`); false when they are dropped. */
  readonly retrying: boolean;
  /** The refused events (`events_rejected`, `invalid_event`); empty otherwise. */
  readonly rejected: readonly RejectedEvent[];

  constructor(details: SluiceSdkErrorDetails) {
    super(details.message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = details.code;
    this.status = details.status;
    this.events = details.events;
    this.retrying = details.retrying;
    this.rejected = details.rejected ?? [];
  }
}
