import type { ApiKeyRing, Principal } from '../auth/api-keys';
import type { ShedRequest } from '../intake/shed-rule';
import { presentedSecret } from './authenticate';
import { isSentryIngest } from './sentry/post-sentry';
import { dsnIngestKey, sentryKeyOf } from './sentry/sentry-key';

/**
 * The valid ingest key a request presents, from its request line and headers alone (its body is
 * not read): the secret in `X-Api-Key` (or `Authorization: Bearer`), else on the Sentry paths the
 * DSN public key in `X-Sentry-Auth` or `?sentry_key=` (http/sentry/sentry-key.ts). Null when auth
 * is off or the request presents none that is valid. A Sentry envelope whose only key is the
 * `dsn` in its body (a tunnel's) names none here.
 */
export function presentedIngestKey(
  keyRing: ApiKeyRing | null,
  request: ShedRequest,
): Extract<Principal, { kind: 'ingest' }> | null {
  if (keyRing === null) return null;
  const secret = presentedSecret(request.headers);
  if (secret !== undefined) {
    const principal = keyRing.authenticate(secret);
    return principal?.kind === 'ingest' ? principal : null;
  }
  if (!isSentryIngest(request)) return null;
  const key = sentryKeyOf(request);
  return key === undefined ? null : dsnIngestKey(keyRing, key);
}
