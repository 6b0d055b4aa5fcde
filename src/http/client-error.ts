import type { Duplex } from 'node:stream';
import { ERROR_CATALOGUE, type ErrorCode } from '../errors/catalogue';

/** Longest a refused connection may linger half-closed before it is destroyed (milliseconds). */
const LINGER_MS = 5000;

/** The catalogue code of an error Node's HTTP parser raised before a request object existed. */
function codeOf(err: NodeJS.ErrnoException): ErrorCode {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return 'headers_too_large';
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 'request_timeout';
    default:
      return 'malformed_request';
  }
}

/**
 * Answers a request Node could not parse (too large a request line or headers, a deadline passed,
 * bad framing) with its catalogue code, then half-closes: Node's default writes the answer and
 * destroys the socket at once, so a client still sending meets a reset instead of the answer.
 * The connection is destroyed if the client does not close it within `LINGER_MS`.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  // A keep-alive connection may have carried earlier requests: the answer may be written unless a
  // response is still being written on it (Node keeps it as `_httpMessage` until it is done).
  const inProgress = (socket as { _httpMessage?: { writableEnded?: boolean } | null })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || (inProgress && !inProgress.writableEnded)) {
    socket.destroy();
    return;
  }
  const code = codeOf(err);
  const { status, message } = ERROR_CATALOGUE[code];
  const body = JSON.stringify({ error: code, message });
  socket.end(
    `HTTP/1.1 ${status} ${statusText(status)}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

function statusText(status: number): string {
  return (
    { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' }[status] ?? 'Error'
  );
}
