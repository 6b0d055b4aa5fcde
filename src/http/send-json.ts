import type { ServerResponse } from 'node:http';

/** A JSON answer, before it is written: what both the Express app and the `/v1/events` listener send. */
export interface JsonAnswer {
  readonly status: number;
  /** JSON text. */
  readonly body: string;
  /** Sent as `Retry-After` (seconds). */
  readonly retryAfterSeconds?: number;
  /** Sent as `X-Sluice-Sample-Rate`: the rate the request's one app is advised to sample at. */
  readonly sampleRate?: number;
  /** The connection closes after the answer (the rest of the body was not read). */
  readonly closesConnection?: boolean;
}

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** The header of the sample rate advised to a request's app (docs/http-api.md, "Sampling advice"). */
export const SAMPLE_RATE_HEADER = 'X-Sluice-Sample-Rate';

/**
 * Writes a JSON answer straight to Node's response: the hot routes answer thousands of times a
 * second, and Express's `res.json` (content-type lookup, freshness and ETag checks) costs more than
 * the rest of a single-event request. Headers set earlier on `res` are kept.
 */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  sendAnswer(res, { status, body: JSON.stringify(body) });
}

/** Writes `answer` with `setHeader` (the Express side), after the headers set earlier on `res`. */
export function sendAnswer(res: ServerResponse, answer: JsonAnswer): void {
  if (answer.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(answer.retryAfterSeconds));
  if (answer.sampleRate !== undefined) res.setHeader(SAMPLE_RATE_HEADER, String(answer.sampleRate));
  if (answer.closesConnection === true) res.setHeader('Connection', 'close');
  res.statusCode = answer.status;
  res.setHeader('Content-Type', JSON_CONTENT_TYPE);
  res.setHeader('Content-Length', Buffer.byteLength(answer.body));
  res.end(answer.body);
}
