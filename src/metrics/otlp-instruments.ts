import { type Registry } from 'prom-client';
import { counter } from './define';

/** Instruments of the OTLP/HTTP receiver. Labels: signal (logs, metrics, traces), encoding, fixed codes. */
export function createOtlpMetrics(registry: Registry) {
  return {
    requests: counter(
      registry,
      'sluice_otlp_requests_total',
      'OTLP export requests answered, by signal, encoding (json, protobuf, unknown) and HTTP status.',
      ['signal', 'encoding', 'status'],
    ),
    records: counter(
      registry,
      'sluice_otlp_records_total',
      'OTLP records (log records, data points, spans) in decoded exports, by signal and outcome: event (became an event for the intake), skipped (no event by design: spans without an error, empty histogram points), unmapped (could not become an event; rejected in partial_success).',
      ['signal', 'outcome'],
    ),
    rejected: counter(
      registry,
      'sluice_otlp_rejected_records_total',
      'OTLP records reported rejected in partial_success (never retried by exporters), by signal and reason.',
      ['signal', 'reason'],
    ),
    attributesDropped: counter(
      registry,
      'sluice_otlp_attributes_dropped_total',
      'OTLP attributes not stored by the attribute rule (over the count or key-length limit, reserved key, non-finite number), by signal.',
      ['signal'],
    ),
  };
}

export type OtlpMetrics = ReturnType<typeof createOtlpMetrics>;
