import type { AppActivity } from '../../metrics/app-activity';
import type { IntakeDecision } from '../intake-decision';
import { countByApp } from '../../events/count-by-app';

/**
 * The per-app tally of what was admitted and throttled (the pipeline view's busiest apps): one update
 * per app per group of a request. Apps refused by their limit first, then each lane's offer.
 */
export function recordActivity(activity: AppActivity, d: IntakeDecision): void {
  if (d.overLimit.length > 0) for (const [app, n] of countByApp(d.overLimit)) activity.record(app, 0, n);
  for (const offer of d.offers) {
    const admitted = offer.refused === null;
    const errors = offer.lane === 'error';
    for (const [app, n] of countByApp(offer.candidates)) {
      activity.record(app, admitted ? n : 0, admitted ? 0 : n, admitted && errors ? n : 0);
    }
  }
}
