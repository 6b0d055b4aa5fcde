import { type Registry } from 'prom-client';
import { counter } from './define';

/**
 * Instruments of the loss map's writes (src/loss-map/). The outcomes themselves keep their
 * counters of src/metrics/instruments.ts (accepted, rejected, throttled, stored, dropped); what
 * SDKs report is counted here. Labels are bounded: `outcome` and `reason` come from fixed lists.
 */
export function createOutcomeMetrics(registry: Registry) {
  return {
    reported: counter(
      registry,
      'sluice_sdk_reported_events_total',
      'Events SDK client reports told this collector about (before dedupe of resent reports), by outcome (captured, sdk_dropped, sdk_delivered, sdk_rejected) and reason.',
      ['outcome', 'reason'],
    ),
    batches: counter(
      registry,
      'sluice_outcome_batches_total',
      'Periodic writes of loss-map counts and client reports, by result (written, failed: kept and retried).',
      ['result'],
    ),
    refused: counter(
      registry,
      'sluice_outcomes_refused_total',
      'Loss-map counts (events) or client reports (reports) storage refused for their own values, written apart from the rest of their batch and dropped alone.',
      ['kind'],
    ),
    discarded: counter(
      registry,
      'sluice_outcomes_discarded_total',
      'Loss-map counts (events) or client reports (reports) this process could not keep because its bound was reached while storage was away.',
      ['kind'],
    ),
  };
}

export type OutcomeMetrics = ReturnType<typeof createOutcomeMetrics>;
