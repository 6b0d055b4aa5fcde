import type { ServerResponse } from 'node:http';
import { ERROR_CATALOGUE, SluiceError } from '../errors/catalogue';
import { STORAGE_BUSY_RETRY_AFTER_S, UNAVAILABLE_RETRY_AFTER_S } from '../intake/retry-after';
import { StorageBusyError } from '../storage/storage-busy';
import { StorageUnavailableError } from '../storage/storage-unavailable';
import type { RequestContext } from './request-context';
import { sendAnswer, type JsonAnswer } from './send-json';

/**
 * The one mapper from errors to HTTP answers: `{"error": code, "message": …}`. Records the code on
 * the request's context (its log line depends on it: see `RequestContext.finished`).
 */
export function errorAnswer(err: unknown, context: RequestContext): JsonAnswer {
  const e = err instanceof SluiceError ? err : knownError(err);
  context.errorCode = e?.code ?? 'internal';
  if (e === null) {
    context.log.error({ err }, 'unhandled error in request');
    return {
      status: 500,
      body: JSON.stringify({ error: 'internal', message: ERROR_CATALOGUE.internal.message }),
    };
  }
  return {
    status: e.status,
    body: JSON.stringify({ error: e.code, message: e.message }),
    ...(e.retryAfterSeconds !== undefined && { retryAfterSeconds: e.retryAfterSeconds }),
    // The rest of an over-long body is not read: the connection cannot be reused.
    ...(e.status === 413 && { closesConnection: true }),
  };
}

/** Answers `err` on an Express response (`errorAnswer`). */
export function sendError(res: ServerResponse, err: unknown, context: RequestContext): void {
  sendAnswer(res, errorAnswer(err, context));
}

/**
 * Errors raised by Node while reading a request (aborted, bad framing) are the client's problem;
 * a read refused by a saturated or unavailable storage is a 503 to retry.
 */
function knownError(err: unknown): SluiceError | null {
  if (err instanceof StorageBusyError) {
    return new SluiceError('storage_busy', err.message, STORAGE_BUSY_RETRY_AFTER_S);
  }
  if (err instanceof StorageUnavailableError) {
    return new SluiceError('storage_unavailable', undefined, UNAVAILABLE_RETRY_AFTER_S);
  }
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE') {
    return new SluiceError('invalid_body', 'Request body was cut off.');
  }
  return null;
}
