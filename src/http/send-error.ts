import type { Response } from 'express';
import { ERROR_CATALOGUE, SluiceError } from '../errors/catalogue';
import { STORAGE_BUSY_RETRY_AFTER_S } from '../intake/retry-after';
import type { Logger } from '../log/logger';
import { StorageBusyError } from '../storage/storage-busy';
import { sendJson } from './send-json';

/**
 * The one mapper from errors to HTTP answers: `{"error": code, "message": …}`. `log` is called only
 * when there is something to log (a request's child logger is made on first use).
 */
export function sendError(res: Response, err: unknown, log: () => Logger): void {
  const e = err instanceof SluiceError ? err : bodyParserError(err);
  if (e === null) {
    log().error({ err }, 'unhandled error in request');
    sendJson(res, 500, { error: 'internal', message: ERROR_CATALOGUE.internal.message });
    return;
  }
  if (e.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(e.retryAfterSeconds));
  if (e.status === 413) res.setHeader('Connection', 'close');
  sendJson(res, e.status, { error: e.code, message: e.message });
}

/**
 * Errors raised by Node while reading a request (aborted, bad framing) are the client's problem;
 * a read refused by a saturated storage is a 503 to retry.
 */
function bodyParserError(err: unknown): SluiceError | null {
  if (err instanceof StorageBusyError) {
    return new SluiceError('storage_busy', err.message, STORAGE_BUSY_RETRY_AFTER_S);
  }
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE') {
    return new SluiceError('invalid_body', 'Request body was cut off.');
  }
  return null;
}
