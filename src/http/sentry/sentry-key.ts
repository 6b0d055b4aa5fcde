import type { IncomingMessage } from 'node:http';
import type { ApiKeyRing, Principal } from '../../auth/api-keys';

/** Longest key read from a request (a longer one is no key: key ids have at most 64 characters). */
const MAX_KEY_LENGTH = 256;

/**
 * The DSN public key a Sentry SDK presents: `sentry_key` in `X-Sentry-Auth`
 * (`Sentry sentry_version=7, sentry_key=…, sentry_client=…`), else in the query string
 * (the JavaScript SDKs). Undefined when neither is there (then `envelopeDsnKey` may find one).
 */
export function sentryKeyOf(req: Pick<IncomingMessage, 'headers' | 'url'>): string | undefined {
  const header = req.headers['x-sentry-auth'];
  if (typeof header === 'string') {
    const fields = header.replace(/^\s*Sentry\s+/i, '');
    for (const field of fields.split(',')) {
      const eq = field.indexOf('=');
      if (eq > 0 && field.slice(0, eq).trim() === 'sentry_key') return bounded(field.slice(eq + 1).trim());
    }
  }
  const url = req.url ?? '';
  const q = url.indexOf('?');
  if (q >= 0) {
    const key = new URLSearchParams(url.slice(q + 1)).get('sentry_key');
    if (key !== null) return bounded(key);
  }
  return undefined;
}

/**
 * The public key of the DSN in an envelope's header (`{"dsn": "https://<key>@host/1", …}`), which
 * SDKs behind a tunnel send instead of a key in the request; undefined when there is none.
 */
export function envelopeDsnKey(body: Buffer): string | undefined {
  const end = body.indexOf(0x0a);
  let header: unknown;
  try {
    header = JSON.parse(body.subarray(0, end < 0 ? body.length : end).toString('utf8'));
  } catch {
    return undefined;
  }
  const dsn = (header as { dsn?: unknown } | null)?.dsn;
  if (typeof dsn !== 'string') return undefined;
  try {
    return bounded(decodeURIComponent(new URL(dsn).username));
  } catch {
    return undefined;
  }
}

function bounded(key: string): string | undefined {
  return key.length > 0 && key.length <= MAX_KEY_LENGTH ? key : undefined;
}

/**
 * The ingest key a DSN public key names: the key whose id it is (docs/sentry.md), else whose
 * secret it is; null when neither, or when the secret is a read token's.
 */
export function dsnIngestKey(ring: ApiKeyRing, key: string): Extract<Principal, { kind: 'ingest' }> | null {
  const byId = ring.ingestKeyById(key);
  if (byId !== null) return byId;
  const bySecret = ring.authenticate(key);
  return bySecret?.kind === 'ingest' ? bySecret : null;
}
