import type { NextFunction, Request, Response } from 'express';
import type { ApiKeyRing, Principal } from '../auth/api-keys';
import { SluiceError } from '../errors/catalogue';
import type { AdmissionMetrics } from '../metrics/admission-instruments';

declare module 'express-serve-static-core' {
  interface Request {
    /** Set by `authenticate` when auth is on. */
    principal?: Principal;
  }
}

/** The secret from `X-Api-Key`, or `Authorization: Bearer …`. */
function presentedSecret(req: Request): string | undefined {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string' && header.length > 0) return header;
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && /^Bearer\s+\S+$/i.test(auth)) return auth.replace(/^Bearer\s+/i, '');
  return undefined;
}

/**
 * Requires a key of `kind` (ingest keys write, read tokens read). Logs carry
 * the key id from here on, never the secret. No ring: auth is off.
 */
export function authenticate(ring: ApiKeyRing | null, kind: Principal['kind'], metrics: AdmissionMetrics) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (ring === null) return next();
    const secret = presentedSecret(req);
    if (secret === undefined) {
      metrics.authFailures.inc({ reason: 'missing' });
      throw new SluiceError(
        'unauthorized',
        'API key missing: send it in X-Api-Key (or Authorization: Bearer).',
      );
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
    req.principal = principal;
    req.log = req.log.child({ keyId: principal.keyId });
    next();
  };
}
