import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { ERROR_CATALOGUE } from '../errors/catalogue';
import type { ShedRule } from '../intake/shed-rule';

const INGEST_PATH = '/v1/events';
const OVERLOADED_BODY = JSON.stringify({
  accepted: 0,
  rejected: [],
  error: 'overloaded',
  message: ERROR_CATALOGUE.overloaded.message,
});

function isIngest(req: IncomingMessage): boolean {
  const url = req.url ?? '';
  return (
    req.method === 'POST' &&
    url.startsWith(INGEST_PATH) &&
    (url.length === INGEST_PATH.length || url[INGEST_PATH.length] === '?')
  );
}

/**
 * The collector's first decision about a request, taken before Express routes it: while the
 * shed rule says the process is saturated (`ShedRule.refuseUnread`), `POST /v1/events` is answered
 * 429 `overloaded` from its request line alone. Its body is never parsed (Node discards it), and
 * the routing, middleware and error machinery that would cost more than the answer are skipped, so
 * shedding stays cheap exactly when the CPU has none to spare. No `throttled` list: every event of
 * the request is to be resent. Everything else goes to `app`.
 */
export function withOverloadGate(
  app: RequestListener,
  shed: Pick<ShedRule, 'refuseUnread'>,
): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    if (isIngest(req)) {
      const refused = shed.refuseUnread();
      if (refused !== null) {
        res.writeHead(429, {
          'Content-Type': 'application/json; charset=utf-8',
          'Content-Length': Buffer.byteLength(OVERLOADED_BODY),
          'Retry-After': String(refused.retryAfterSeconds),
        });
        res.end(OVERLOADED_BODY);
        return;
      }
    }
    app(req, res);
  };
}
