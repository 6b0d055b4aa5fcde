import { type Registry } from 'prom-client';
import { counter } from './define';

/** Instruments of the Sentry endpoints. Labels: fixed endpoint names, item types and outcomes. */
export function createSentryMetrics(registry: Registry) {
  return {
    requests: counter(
      registry,
      'sluice_sentry_requests_total',
      'Sentry SDK requests answered, by endpoint (envelope, store) and HTTP status.',
      ['endpoint', 'status'],
    ),
    items: counter(
      registry,
      'sluice_sentry_items_total',
      'Sentry envelope items (and store bodies) read, by item type (event, log, client_report, transaction, session, … ; other) and outcome: event (became events for the intake), not_stored (taken and not stored by design), unmapped (could not become an event), report (a client report fed to the loss map).',
      ['type', 'outcome'],
    ),
    attributesDropped: counter(
      registry,
      'sluice_sentry_attributes_dropped_total',
      'Tags, context fields and log attributes of Sentry events not stored by the attribute rule (over the count or key-length limit).',
    ),
  };
}

export type SentryMetrics = ReturnType<typeof createSentryMetrics>;
