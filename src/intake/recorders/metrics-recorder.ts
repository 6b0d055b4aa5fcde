import { EVENT_TYPES } from '../../events/types';
import type { IntakeMetrics } from '../../metrics/intake-instruments';
import type { Metrics } from '../../metrics/instruments';
import type { IntakeDecision } from '../intake-decision';
import { countByType } from './count-by';

/**
 * Prometheus counts of intake decisions: one increment per series a request touches (per type, per
 * reason), never one per event.
 */
export class IntakeMetricsRecorder {
  constructor(
    private readonly metrics: Metrics,
    private readonly intakeMetrics: IntakeMetrics,
  ) {}

  /** A request refused before intake read it (`too_many_events`). */
  requestRefused(code: string): void {
    this.metrics.requestsRejected.inc({ code });
  }

  record(d: IntakeDecision): void {
    const { metrics } = this;
    if (d.requestRefused !== null) metrics.requestsRejected.inc({ code: d.requestRefused });
    const received: Record<string, number> = { ...d.received };
    if (d.rejected.length > 0) {
      const byReason = new Map<string, number>();
      for (const r of d.rejected) {
        byReason.set(r.reason, (byReason.get(r.reason) ?? 0) + 1);
        received[r.label] = (received[r.label] ?? 0) + 1;
      }
      for (const [reason, n] of byReason) metrics.eventsRejected.inc({ reason }, n);
    }
    for (const type in received)
      if ((received[type] as number) > 0) metrics.eventsReceived.inc({ type }, received[type]);
    if (d.unread.length > 0)
      metrics.eventsThrottled.inc({ reason: 'queue_full', type: 'unvalidated' }, d.unread.length);
    if (d.limits.length > 0) {
      const verdicts = new Map<string, { result: string; store: string; n: number }>();
      for (const v of d.limits) {
        const key = `${v.result} ${v.store}`;
        const seen = verdicts.get(key);
        if (seen === undefined) verdicts.set(key, { result: v.result, store: v.store, n: 1 });
        else seen.n++;
      }
      for (const v of verdicts.values())
        this.intakeMetrics.decisions.inc({ result: v.result, store: v.store }, v.n);
    }
    if (d.overLimit.length > 0) {
      const byType = countByType(d.overLimit);
      for (const type of EVENT_TYPES)
        if (byType[type] > 0) metrics.eventsThrottled.inc({ reason: 'rate_limited', type }, byType[type]);
    }
    for (const offer of d.offers) {
      const byType = countByType(offer.candidates);
      for (const type of EVENT_TYPES) {
        if (byType[type] === 0) continue;
        if (offer.refused === null) metrics.eventsAccepted.inc({ type, lane: offer.lane }, byType[type]);
        else metrics.eventsThrottled.inc({ reason: offer.refused, type }, byType[type]);
      }
    }
    if (d.answer.kind !== 'unavailable')
      for (const a of d.answer.advice) this.intakeMetrics.advice.observe(a.sampleRate);
  }
}
