import { bytes, duration, integer } from './parsers';
import { setting } from './setting';

const MiB = 1024 * 1024;

/** Settings of the OTLP/HTTP receiver (docs/otlp.md). */
export const OTLP_SETTINGS = {
  otlpPort: setting({
    env: 'SLUICE_OTLP_PORT',
    default: '4318',
    doc: 'Port of the OTLP/HTTP receiver (`POST /v1/logs`, `/v1/metrics`, `/v1/traces`) on `SLUICE_HOST`; 4318 is where OTel exporters send by default. `0` turns the receiver off.',
    parse: integer(0, 65535),
  }),
  otlpMaxBodyBytes: setting({
    env: 'SLUICE_OTLP_MAX_BODY_BYTES',
    default: '8MiB',
    doc: 'Largest OTLP export body, after decompression (OTLP batches are larger than SDK batches).',
    parse: bytes(1024, 256 * MiB),
  }),
  otlpMaxJsonDepth: setting({
    env: 'SLUICE_OTLP_MAX_JSON_DEPTH',
    default: '32',
    doc: 'Deepest nesting of arrays and objects in an OTLP/JSON body (a log attribute already sits 10 levels down).',
    parse: integer(12, 128),
  }),
  otlpRetryAfterMaxMs: setting({
    env: 'SLUICE_OTLP_RETRY_AFTER_MAX',
    default: '2s',
    doc: 'Longest `Retry-After` of an OTLP 429/503 (whole seconds). OTel exporters give up on a batch when told to wait past their export timeout (10 s by default), so it stays well below.',
    parse: duration(1000, 60_000, 's'),
  }),
} as const;
