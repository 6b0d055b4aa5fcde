import { countEvents, type CountSink, type OutcomeSubject } from '../../loss-map/event-outcomes';
import { minuteOf } from '../../loss-map/outcome';
import type { IntakeDecision } from '../intake-decision';

const asSubject = (s: OutcomeSubject): OutcomeSubject => s;

/**
 * The loss map's counts of a decision (docs/ARCHITECTURE.md, "The loss map"): one count per
 * distinct (app, minute, type) of each group, and one per rejected event in request order.
 */
export function recordLossMap(count: CountSink, d: IntakeDecision): void {
  const { origin } = d;
  for (const r of d.rejected) {
    const { app, ts, type } = r.subject;
    count({
      app,
      minute: minuteOf(ts),
      type,
      outcome: 'rejected',
      reason: r.reason,
      origin: r.origin,
      count: 1,
    });
  }
  if (d.unread.length > 0) countEvents(count, d.unread, asSubject, 'throttled', 'queue_full', origin);
  if (d.overLimit.length > 0)
    countEvents(count, d.overLimit, asSubject, d.overLimitOutcome, 'rate_limited', origin);
  for (const offer of d.offers) {
    const { candidates } = offer;
    if (offer.refused !== null) countEvents(count, candidates, asSubject, 'throttled', offer.refused, origin);
    else if (offer.durable === null || d.durableInTime)
      countEvents(count, candidates, asSubject, 'accepted', '', origin);
    else {
      // Answered 503 while the events are in the lanes: accepted once storage has settled them,
      // so every copy that reaches storage is accepted once, and a resend that storage finds
      // stored is a duplicate.
      countEvents(count, candidates, asSubject, 'throttled', 'unavailable', origin);
      void offer.durable.settled?.then(() =>
        countEvents(count, candidates, asSubject, 'accepted', '', origin),
      );
    }
  }
}
