import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { ERROR_CATALOGUE } from '../errors/catalogue';
import type { ShedRule } from '../intake/shed-rule';
import { PATHS, pathOf } from './paths';

const OVERLOADED_BODY = JSON.stringify({
  accepted: 0,
  rejected: [],
  error: 'overloaded',
  message: ERROR_CATALOGUE.overloaded.message,
});

/** Whether a request is one the shed rule governs: `POST` to an ingest path, matched as the router does. */
export type IngestRequestTest = (req: IncomingMessage) => boolean;

/** `POST /v1/events`, exactly (paths.ts). */
export const isEventsIngest: IngestRequestTest = (req) =>
  req.method === 'POST' && pathOf(req.url) === PATHS.events;

/**
 * The collector's first decision about a request, admitted before Express routes it: while the
 * shed rule says the process is saturated (`ShedRule.refuseUnread`), an ingest request is
 * answered 429 `overloaded` from its request line alone. Its body is never parsed (Node discards
 * it), and the routing, middleware and error machinery that would cost more than the answer are
 * skipped, so shedding stays cheap exactly when the CPU has none to spare. `refused` writes that
 * answer (default: the `/v1/events` body, with no `throttled` list: every event is to be resent).
 * The gate counts the ingest requests it let through that are not answered yet: the rule's
 * evidence that this process, not only the machine, is behind. Everything else goes to `app`.
 */
export function withOverloadGate(
  app: RequestListener,
  shed: Pick<ShedRule, 'refuseUnread' | 'hold'>,
  isIngest: IngestRequestTest = isEventsIngest,
  refused: (req: IncomingMessage, res: ServerResponse, retryAfterSeconds: number) => void = answerOverloaded,
): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    if (isIngest(req)) {
      const refusal = shed.refuseUnread(req);
      if (refusal !== null) {
        refused(req, res, refusal.retryAfterSeconds);
        return;
      }
      res.once('close', shed.hold());
    }
    app(req, res);
  };
}

function answerOverloaded(_req: IncomingMessage, res: ServerResponse, retryAfterSeconds: number): void {
  res.writeHead(429, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(OVERLOADED_BODY),
    'Retry-After': String(retryAfterSeconds),
  });
  res.end(OVERLOADED_BODY);
}
