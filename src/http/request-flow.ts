import type { ApiKeyRing } from '../auth/api-keys';
import type { ShedRequest } from '../intake/shed-rule';
import { presentedIngestKey } from './presented-ingest-key';

/**
 * `X-Sluice-App`: the app whose events a request carries, named before its body (the SDK sends it).
 * Only the overload gate reads it, to tell who sends most before any body is read; the events'
 * own `source.app` is what intake, limits and storage go by.
 */
export const APP_HEADER = 'x-sluice-app';
/** Longest `X-Sluice-App` read (characters); a longer one names no flow. */
const MAX_APP_HEADER = 256;

/**
 * The flow of an ingest request, from its request line and headers alone (intake/flow-shares.ts):
 * the app of a valid ingest key (presented-ingest-key.ts: a Sentry DSN key too); else its
 * `X-Sluice-App`; else '' (every request that names none shares one flow).
 */
export function requestFlow(keyRing: ApiKeyRing | null): (request: ShedRequest) => string {
  return (request) => {
    const principal = presentedIngestKey(keyRing, request);
    if (principal !== null) return `key:${principal.app}`;
    const app = request.headers[APP_HEADER];
    return typeof app === 'string' && app.length <= MAX_APP_HEADER ? `app:${app}` : '';
  };
}
