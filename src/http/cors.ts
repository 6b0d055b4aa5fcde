import type { NextFunction, Request, Response } from 'express';
import { READ_SOURCE_HEADER } from './read-route-header';
import { SAMPLE_RATE_HEADER } from './send-json';

/** Seconds a browser may cache a preflight answer. */
const PREFLIGHT_MAX_AGE_S = 600;

/** Response headers as name, value, name, value, … (what `ServerResponse.writeHead` takes). */
export type HeaderPairs = readonly string[];

/** The CORS headers of one answer, and whether the request was a preflight (answered 204 at once). */
export interface CorsAnswer {
  readonly headers: HeaderPairs;
  readonly preflight: boolean;
}

/** The methods a path answers, as a preflight lists them. */
export const CORS_METHODS = {
  /** `/v1/events`: browser SDKs write, dashboards read. */
  events: 'GET, POST, OPTIONS',
  /** The other read routes. */
  read: 'GET, OPTIONS',
  /** The Sentry endpoints: browser SDKs write. */
  sentry: 'POST, OPTIONS',
} as const;

/**
 * CORS for browsers on other origins (SDKs writing `POST /v1/events`, dashboards reading the read
 * API): answers preflights and marks answers for allowed origins. `origins` is a list of exact
 * origins or `*`; `methods` is what a preflight allows; `headers` names the headers a front adds
 * to the ones every answer exposes and a preflight allows (the Sentry endpoints'). An origin that is not allowed gets no CORS
 * headers (the browser blocks it). Every answer varies by `Origin`. The header sets are built once
 * (the allowed origins are a fixed list), so an answer costs no allocation.
 */
export function corsPolicy(
  origins: readonly string[],
  methods: string = CORS_METHODS.events,
  headers: { readonly expose: string; readonly allow: string } = { expose: '', allow: '' },
): (origin: unknown, method: string | undefined) => CorsAnswer {
  const any = origins.includes('*');
  const vary: HeaderPairs = ['Vary', 'Origin'];
  const build = (allowOrigin: string): { actual: CorsAnswer; preflight: CorsAnswer } => {
    const actual = [
      ...vary,
      'Access-Control-Allow-Origin',
      allowOrigin,
      'Access-Control-Expose-Headers',
      `Retry-After, X-Request-Id, ${SAMPLE_RATE_HEADER}, ${READ_SOURCE_HEADER}${headers.expose && `, ${headers.expose}`}`,
    ];
    return {
      actual: { headers: actual, preflight: false },
      preflight: {
        preflight: true,
        headers: [
          ...actual,
          'Access-Control-Allow-Methods',
          methods,
          'Access-Control-Allow-Headers',
          `Content-Type, Content-Encoding, X-Api-Key, X-Sluice-App, Authorization${headers.allow && `, ${headers.allow}`}`,
          'Access-Control-Max-Age',
          String(PREFLIGHT_MAX_AGE_S),
        ],
      },
    };
  };
  const refused = {
    actual: { headers: vary, preflight: false },
    preflight: { headers: vary, preflight: true },
  };
  const forAny = any ? build('*') : null;
  const byOrigin = new Map(origins.filter((o) => o !== '*').map((o) => [o, build(o)]));
  return (origin, method) => {
    const sets = typeof origin === 'string' ? (forAny ?? byOrigin.get(origin) ?? refused) : refused;
    return method === 'OPTIONS' ? sets.preflight : sets.actual;
  };
}

/** Writes header pairs with `setHeader` (the Express side). */
export function setHeaders(res: Response, headers: HeaderPairs): void {
  for (let i = 0; i < headers.length; i += 2) res.setHeader(headers[i] as string, headers[i + 1] as string);
}

/** Express middleware for `corsPolicy`: a preflight is answered 204 here; other requests go on. */
export function cors(
  origins: readonly string[],
  methods: string = CORS_METHODS.events,
  headers?: Parameters<typeof corsPolicy>[2],
) {
  const policy = corsPolicy(origins, methods, headers);
  return (req: Request, res: Response, next: NextFunction): void => {
    const answer = policy(req.headers.origin, req.method);
    setHeaders(res, answer.headers);
    if (answer.preflight) {
      res.status(204).end();
      return;
    }
    next();
  };
}
