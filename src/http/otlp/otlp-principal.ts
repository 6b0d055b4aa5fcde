import type { IncomingMessage } from 'node:http';
import type { ApiKeyRing, Principal } from '../../auth/api-keys';
import { SluiceError } from '../../errors/catalogue';
import type { AdmissionMetrics } from '../../metrics/admission-instruments';

/**
 * The ingest key of an OTLP request, from `X-Api-Key` (or `Authorization: Bearer …`): exporters
 * send it through `OTEL_EXPORTER_OTLP_HEADERS`. Null when auth is off. Throws 401 like
 * `POST /v1/events` does.
 */
export function otlpPrincipal(
  req: IncomingMessage,
  ring: ApiKeyRing | null,
  metrics: AdmissionMetrics,
): Principal | null {
  if (ring === null) return null;
  const header = req.headers['x-api-key'];
  const auth = req.headers.authorization;
  const secret =
    typeof header === 'string' && header.length > 0
      ? header
      : typeof auth === 'string' && /^Bearer\s+\S+$/i.test(auth)
        ? auth.replace(/^Bearer\s+/i, '')
        : undefined;
  if (secret === undefined) {
    metrics.authFailures.inc({ reason: 'missing' });
    throw new SluiceError(
      'unauthorized',
      'API key missing: send it in X-Api-Key (OTEL_EXPORTER_OTLP_HEADERS).',
    );
  }
  const principal = ring.authenticate(secret);
  if (principal === null) {
    metrics.authFailures.inc({ reason: 'invalid' });
    throw new SluiceError('unauthorized', 'API key not valid.');
  }
  if (principal.kind !== 'ingest') {
    metrics.authFailures.inc({ reason: 'wrong_kind' });
    throw new SluiceError('unauthorized', 'A read token cannot write events.');
  }
  return principal;
}
