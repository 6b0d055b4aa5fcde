import { Counter, type Registry } from 'prom-client';

/** Instruments of the OTLP/HTTP receiver. Labels: signal (logs, metrics, traces), encoding, fixed codes. */
export function createOtlpMetrics(registry: Registry) {
  const r = [registry];
  return {
    requests: new Counter({
      name: 'sluice_otlp_requests_total',
      help: 'OTLP export requests answered, by signal, encoding (json, protobuf, unknown) and HTTP status.',
      labelNames: ['signal', 'encoding', 'status'] as const,
      registers: r,
    }),
    records: new Counter({
      name: 'sluice_otlp_records_total',
      help: 'OTLP records (log records, data points, spans) in decoded exports, by signal and outcome: event (became an event for the intake), skipped (no event by design: spans without an error, empty histogram points), unmapped (could not become an event; rejected in partial_success).',
      labelNames: ['signal', 'outcome'] as const,
      registers: r,
    }),
    rejected: new Counter({
      name: 'sluice_otlp_rejected_records_total',
      help: 'OTLP records reported rejected in partial_success (never retried by exporters), by signal and reason.',
      labelNames: ['signal', 'reason'] as const,
      registers: r,
    }),
    attributesDropped: new Counter({
      name: 'sluice_otlp_attributes_dropped_total',
      help: 'OTLP attributes not stored by the attribute rule (over the count or key-length limit, reserved key, non-finite number), by signal.',
      labelNames: ['signal'] as const,
      registers: r,
    }),
  };
}

export type OtlpMetrics = ReturnType<typeof createOtlpMetrics>;
