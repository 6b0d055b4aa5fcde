import type { IncomingHttpHeaders } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { ApiKeyRing, Principal } from '../auth/api-keys';
import { SluiceError } from '../errors/catalogue';
import type { IntakeMetrics } from '../metrics/intake-instruments';

/** The secret from `X-Api-Key`, or `Authorization: Bearer …`. */
export function presentedSecret(headers: IncomingHttpHeaders): string | undefined {
  const header = headers['x-api-key'];
  if (typeof header === 'string' && header.length > 0) return header;
  const auth = headers.authorization;
  if (typeof auth === 'string' && /^Bearer\s+\S+$/i.test(auth)) return auth.replace(/^Bearer\s+/i, '');
  return undefined;
}

/**
 * The principal of a request that needs a key of `kind` (ingest keys write, read tokens read); null
 * when auth is off (no ring). Throws 401 `unauthorized` and counts the failure by reason. `howToSend`
 * ends the "missing" message: where this front's clients put the key.
 */
export function principalOf(
  headers: IncomingHttpHeaders,
  ring: ApiKeyRing | null,
  kind: Principal['kind'],
  metrics: IntakeMetrics,
  howToSend = 'send it in X-Api-Key (or Authorization: Bearer).',
): Principal | null {
  if (ring === null) return null;
  const secret = presentedSecret(headers);
  if (secret === undefined) {
    metrics.authFailures.inc({ reason: 'missing' });
    throw new SluiceError('unauthorized', `API key missing: ${howToSend}`);
  }
  const principal = ring.authenticate(secret);
  if (principal === null) {
    metrics.authFailures.inc({ reason: 'invalid' });
    throw new SluiceError('unauthorized', 'API key not valid.');
  }
  if (principal.kind !== kind) {
    metrics.authFailures.inc({ reason: 'wrong_kind' });
    throw new SluiceError(
      'unauthorized',
      kind === 'ingest'
        ? 'A read token cannot write events.'
        : 'An ingest key cannot read; use a read token.',
    );
  }
  return principal;
}

/** Express middleware: requires a key of `kind` (`principalOf`) and records it in `req.context`. */
export function authenticate(ring: ApiKeyRing | null, kind: Principal['kind'], metrics: IntakeMetrics) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const principal = principalOf(req.headers, ring, kind, metrics);
    if (principal !== null) req.context.authenticated(principal);
    next();
  };
}
