import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { ApiKeyRing } from '../auth/api-keys';
import type { IntakeMetrics } from '../metrics/intake-instruments';
import { principalOf } from './authenticate';
import type { CorsAnswer, corsPolicy } from './cors';
import { isEventsIngest } from './overload-gate';
import { PATHS, pathOf } from './paths';
import { contextOf, type RequestContext, type RequestContextDeps } from './request-context';
import type { EventsHandler } from './routes/post-events';
import { errorAnswer } from './send-error';
import { JSON_CONTENT_TYPE, SAMPLE_RATE_HEADER, type JsonAnswer } from './send-json';

export interface EventsListenerDeps {
  readonly context: RequestContextDeps;
  readonly handle: EventsHandler;
  /** API keys; null: auth off. */
  readonly keyRing: ApiKeyRing | null;
  readonly intakeMetrics: IntakeMetrics;
  /** The CORS policy of `POST /v1/events`; null: no CORS (preflights then go to the app). */
  readonly cors: ReturnType<typeof corsPolicy> | null;
}

/**
 * `POST /v1/events` (and its CORS preflight) served straight from Node's request listener: the
 * collector's hot route, answered thousands of times a second, without the Express router and
 * its per-request prototype and property setup, which cost more than the rest of a single-event
 * request. It runs the same steps as the app's route, from the same functions: the request
 * context (id, log, duration metric, draining), CORS, authentication, the handler, and the one
 * error mapper. Each answer is written in one `writeHead` with its headers in one array, in the
 * order the app's `setHeader` calls give them.
 *
 * `serves` says which requests it takes: `POST` to the exact origin-form path, matched as the
 * overload gate matches it (paths.ts), and `OPTIONS` there while CORS is on. Anything else (other
 * methods, other spellings, an absolute-form target) goes to the app, which routes it as before.
 */
export function eventsListener(deps: EventsListenerDeps): {
  readonly serves: (req: IncomingMessage) => boolean;
  readonly listener: RequestListener;
} {
  const preflights = deps.cors !== null;
  return {
    serves: (req) =>
      isEventsIngest(req) || (preflights && req.method === 'OPTIONS' && pathOf(req.url) === PATHS.events),
    listener: (req, res) => void serve(deps, req, res),
  };
}

async function serve(deps: EventsListenerDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const context = contextOf(deps.context, req);
  res.once('finish', () => context.finished(PATHS.events, res.statusCode));
  const cors = deps.cors === null ? null : deps.cors(req.headers.origin, req.method);
  if (cors?.preflight === true) {
    res.writeHead(204, headersOf(context, cors, null));
    res.end();
    return;
  }
  let answer: JsonAnswer;
  try {
    const principal = principalOf(req.headers, deps.keyRing, 'ingest', deps.intakeMetrics);
    if (principal !== null) context.authenticated(principal);
    answer = await deps.handle(req, context.principal);
  } catch (err) {
    answer = errorAnswer(err, context);
  }
  try {
    res.writeHead(answer.status, headersOf(context, cors, answer));
    res.end(answer.body);
  } catch (err) {
    // Nothing is left to answer with; the process must not fall over for one response.
    context.log.error({ err }, 'error after response started');
    res.destroy();
  }
}

/** An answer's headers, in the order the app sets them: context, CORS, then the answer's own. */
function headersOf(context: RequestContext, cors: CorsAnswer | null, answer: JsonAnswer | null): string[] {
  const headers = ['X-Request-Id', context.id];
  if (context.closesConnection) headers.push('Connection', 'close');
  if (cors !== null) for (const h of cors.headers) headers.push(h);
  if (answer === null) return headers;
  if (answer.retryAfterSeconds !== undefined) headers.push('Retry-After', String(answer.retryAfterSeconds));
  if (answer.sampleRate !== undefined) headers.push(SAMPLE_RATE_HEADER, String(answer.sampleRate));
  if (answer.closesConnection === true && !context.closesConnection) headers.push('Connection', 'close');
  headers.push('Content-Type', JSON_CONTENT_TYPE, 'Content-Length', String(Buffer.byteLength(answer.body)));
  return headers;
}
