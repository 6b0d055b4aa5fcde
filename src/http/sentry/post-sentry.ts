import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ApiKeyRing, Principal } from '../../auth/api-keys';
import { SluiceError } from '../../errors/catalogue';
import type { TurnOrder } from '../../intake/turn-order';
import type { IntakeMetrics } from '../../metrics/intake-instruments';
import type { SentryMetrics } from '../../metrics/sentry-instruments';
import type { SentryIntake, SentryRequest } from '../../sentry/sentry-intake';
import { readBody } from '../read-body';
import { sendError } from '../send-error';
import { sendJson } from '../send-json';
import { dsnIngestKey, envelopeDsnKey, sentryKeyOf } from './sentry-key';

/** The routes of the Sentry endpoints (Express paths; docs/sentry.md). */
export const SENTRY_PATHS = {
  envelope: '/api/:projectId/envelope/',
  store: '/api/:projectId/store/',
} as const;

/** The header naming refused Sentry data categories. */
export const RATE_LIMITS_HEADER = 'X-Sentry-Rate-Limits';

const PROJECT_ID = /^[0-9]{1,20}$/;
/** The paths of `SENTRY_PATHS` as the router matches them (exact, case-sensitive). */
const SENTRY_PATH = /^\/api\/[^/?]+\/(?:envelope|store)\/$/;

/** `POST` to a Sentry endpoint: the overload gate sheds it as it does `POST /v1/events`. */
export function isSentryIngest(req: Pick<IncomingMessage, 'method' | 'url'>): boolean {
  if (req.method !== 'POST') return false;
  const url = req.url ?? '';
  const q = url.indexOf('?');
  return SENTRY_PATH.test(q < 0 ? url : url.slice(0, q));
}

export interface SentryRouteDeps {
  readonly intake: Pick<SentryIntake, 'ingest'>;
  /** API keys; null: auth off, and the project id names the app (`projects`). */
  readonly keyRing: ApiKeyRing | null;
  /** Auth off: the app of each project id (`SLUICE_SENTRY_PROJECTS`); an unlisted one is `sentry-<id>`. */
  readonly projects: ReadonlyMap<string, string>;
  /** Largest body after decompression (bytes; `SLUICE_MAX_BODY_BYTES`). */
  readonly maxBodyBytes: number;
  /** Turns for the CPU-heavy part (parse, map, admit), shared with `POST /v1/events`. */
  readonly turns: Pick<TurnOrder, 'wait'>;
  readonly intakeMetrics: IntakeMetrics;
  readonly sentryMetrics: SentryMetrics;
}

/**
 * `POST /api/<project_id>/envelope/` and `/store/`: thin: the DSN names the app, the body is read
 * (gzip or deflate, bounded after decompression), the Sentry intake takes it, and its outcome is
 * answered as Sentry SDKs expect (200 `{"id"}`; 429/503 with `Retry-After` and
 * `X-Sentry-Rate-Limits`).
 */
export function postSentry(endpoint: SentryRequest['endpoint'], deps: SentryRouteDeps): RequestHandler {
  return (req: Request, res: Response, _next: NextFunction): void => {
    void handle(endpoint, deps, req, res).then((status) => {
      deps.sentryMetrics.requests.inc({ endpoint, status: String(status) });
    });
  };
}

async function handle(
  endpoint: SentryRequest['endpoint'],
  deps: SentryRouteDeps,
  req: Request,
  res: Response,
): Promise<number> {
  try {
    const projectId = String(req.params.projectId ?? '');
    if (!PROJECT_ID.test(projectId)) {
      throw new SluiceError('not_found', 'A Sentry project id is a number: /api/<digits>/envelope/.');
    }
    const presented = sentryKeyOf(req);
    // Auth on and no key in the request: an envelope may name its DSN in its header (a tunnel's
    // requests), so its body is read before the key is known.
    const early =
      deps.keyRing === null || presented !== undefined ? null : await readBody(req, deps.maxBodyBytes, true);
    const key = presented ?? (early !== null && endpoint === 'envelope' ? envelopeDsnKey(early) : undefined);
    const principal = principalOf(key, req, deps);
    const app = principal?.app ?? deps.projects.get(projectId) ?? `sentry-${projectId}`;
    const body = early ?? (await readBody(req, deps.maxBodyBytes, true));
    await deps.turns.wait();
    const outcome = await deps.intake.ingest({ endpoint, app, principal, body });
    if (outcome.kind === 'malformed') throw new SluiceError('invalid_body', outcome.message);
    if (outcome.kind === 'admitted') {
      if (outcome.rateLimits !== null) res.setHeader(RATE_LIMITS_HEADER, outcome.rateLimits);
      sendJson(res, 200, outcome.eventId === null ? {} : { id: outcome.eventId });
      return 200;
    }
    res.setHeader(RATE_LIMITS_HEADER, outcome.rateLimits);
    sendError(res, new SluiceError(outcome.reason, undefined, outcome.retryAfterSeconds), req.context);
    return outcome.status;
  } catch (err) {
    sendError(res, err, req.context);
    return res.statusCode;
  }
}

/**
 * Auth on: the ingest key the DSN's public key `key` names (its id, or its secret), recorded on
 * the request; 401 without one. Auth off: null (the project id names the app).
 */
function principalOf(
  key: string | undefined,
  req: Request,
  deps: SentryRouteDeps,
): Extract<Principal, { kind: 'ingest' }> | null {
  const ring = deps.keyRing;
  if (ring === null) return null;
  if (key === undefined) {
    deps.intakeMetrics.authFailures.inc({ reason: 'missing' });
    throw new SluiceError(
      'unauthorized',
      'DSN public key missing: the DSN is https://<ingest key id>@<collector>/<project id> (sentry_key in X-Sentry-Auth or the query, or the dsn of the envelope header).',
    );
  }
  const principal = dsnIngestKey(ring, key);
  if (principal === null) {
    deps.intakeMetrics.authFailures.inc({ reason: 'invalid' });
    throw new SluiceError('unauthorized', 'DSN public key is not the id of an ingest key.');
  }
  req.context.authenticated(principal);
  return principal;
}
