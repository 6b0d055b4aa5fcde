/**
 * Every request-level error the collector answers with: a stable code (the
 * `error` field of the JSON body), its HTTP status and a default message.
 * Codes are part of the wire contract; test/unit/docs-in-step.test.ts
 * keeps this table and docs/http-api.md in step.
 */
export const ERROR_CATALOGUE = {
  invalid_json: { status: 400, message: 'Body is not valid JSON.' },
  invalid_utf8: { status: 400, message: 'Body is not valid UTF-8.' },
  invalid_gzip: { status: 400, message: 'Body is not valid gzip.' },
  invalid_protobuf: { status: 400, message: 'Body is not a valid protobuf OTLP export request.' },
  invalid_body: { status: 400, message: 'Body must be a JSON object with an "events" array.' },
  too_deep: { status: 400, message: 'Body nests arrays or objects deeper than allowed.' },
  malformed_request: { status: 400, message: 'The request is not valid HTTP/1.1.' },
  invalid_parameter: { status: 400, message: 'A query parameter is not valid.' },
  unauthorized: { status: 401, message: 'API key missing or not valid.' },
  protected_mode: {
    status: 403,
    message:
      'Protected mode: with no API keys configured, the read API, the console and /pipeline answer loopback clients only. Set SLUICE_AUTH_KEYS_FILE to read with a read token, or SLUICE_PROTECTED_MODE=off to open them to every client.',
  },
  not_found: { status: 404, message: 'No such route.' },
  method_not_allowed: { status: 405, message: 'The path does not answer this method; see the Allow header.' },
  request_timeout: {
    status: 408,
    message: 'The request did not arrive in time (SLUICE_HEADERS_TIMEOUT_MS, SLUICE_REQUEST_TIMEOUT_MS).',
  },
  body_too_large: { status: 413, message: 'Body is larger than allowed (after decompression).' },
  too_many_events: { status: 413, message: 'Request carries more events than allowed.' },
  too_many_values: {
    status: 413,
    message: 'Body holds more JSON arrays, objects or members than the largest request allowed can.',
  },
  events_rejected: {
    status: 422,
    message:
      'Every event of the request was rejected as invalid; see rejected[] (reason, field, hint). Resending it cannot help.',
  },
  headers_too_large: { status: 431, message: 'The request line and headers are larger than 16 KiB.' },
  unsupported_media_type: { status: 415, message: 'Content-Type must be application/json.' },
  unsupported_encoding: { status: 415, message: 'Content-Encoding must be gzip or identity.' },
  rate_limited: {
    status: 429,
    message: 'Rate limit exceeded; retry the throttled events after Retry-After.',
  },
  queue_full: { status: 429, message: 'Write queue is full; retry the throttled events after Retry-After.' },
  overloaded: {
    status: 429,
    message: 'Collector is saturated; the request was not read. Retry all of its events after Retry-After.',
  },
  storage_unavailable: { status: 503, message: 'Storage is unreachable; retry after Retry-After.' },
  storage_busy: { status: 503, message: 'Storage is busy with other reads; retry after Retry-After.' },
  internal: { status: 500, message: 'Internal error.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** An error that maps to one catalogue entry. Thrown by parsers and services, mapped to HTTP in one place. */
export class SluiceError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    /** Seconds for a `Retry-After` header, when the client should come back. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message ?? ERROR_CATALOGUE[code].message);
    this.name = 'SluiceError';
    this.status = ERROR_CATALOGUE[code].status;
  }
}
