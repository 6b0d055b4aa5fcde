import type { NextFunction, Request, Response } from 'express';

/** Seconds a browser may cache a preflight answer. */
const PREFLIGHT_MAX_AGE_S = 600;

/**
 * CORS for browser SDKs on `POST /v1/events`: answers preflights and marks
 * answers for allowed origins. `origins` is a list of exact origins or `*`.
 * An origin that is not allowed gets no CORS headers (the browser blocks it).
 */
export function cors(origins: readonly string[]) {
  const any = origins.includes('*');
  const allowed = new Set(origins);
  return (req: Request, res: Response, next: NextFunction): void => {
    const origin = req.headers.origin;
    res.vary('Origin');
    if (typeof origin !== 'string' || !(any || allowed.has(origin))) {
      if (req.method === 'OPTIONS') {
        res.status(204).end();
        return;
      }
      return next();
    }
    res.setHeader('Access-Control-Allow-Origin', any ? '*' : origin);
    res.setHeader('Access-Control-Expose-Headers', 'Retry-After, X-Request-Id');
    if (req.method === 'OPTIONS') {
      res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
      res.setHeader(
        'Access-Control-Allow-Headers',
        'Content-Type, Content-Encoding, X-Api-Key, Authorization',
      );
      res.setHeader('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_S));
      res.status(204).end();
      return;
    }
    next();
  };
}
