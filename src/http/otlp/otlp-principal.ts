import type { IncomingMessage } from 'node:http';
import type { ApiKeyRing, Principal } from '../../auth/api-keys';
import type { IntakeMetrics } from '../../metrics/intake-instruments';
import { principalOf } from '../authenticate';

/**
 * The ingest key of an OTLP request, from `X-Api-Key` (or `Authorization: Bearer …`): exporters
 * send it through `OTEL_EXPORTER_OTLP_HEADERS`. Null when auth is off. Throws 401 like
 * `POST /v1/events` does: the same lookup, only the hint for a missing key differs.
 */
export function otlpPrincipal(
  req: IncomingMessage,
  ring: ApiKeyRing | null,
  metrics: IntakeMetrics,
): Principal | null {
  return principalOf(
    req.headers,
    ring,
    'ingest',
    metrics,
    'send it in X-Api-Key (OTEL_EXPORTER_OTLP_HEADERS).',
  );
}
