import type { EventRateLimiter, LimitSubject } from '../ratelimit/event-rate-limiter';
import type { Candidate, LimitVerdict } from './intake-decision';
import { retryAfterFromMs } from './retry-after';

/** The non-error events of one app (or API key) of a request, in request order. */
export interface AppGroup<Row> {
  readonly subject: LimitSubject;
  readonly candidates: Candidate<Row>[];
}

/** What the rate limit made of a request's apps. */
export interface LimitStep<Row> {
  /** Per app, the events granted: the first ones, in request order. */
  readonly passed: AppGroup<Row>[];
  /** One per app asked about. */
  readonly verdicts: LimitVerdict[];
  /** The events refused, app after app. */
  readonly overLimit: Candidate<Row>[];
  /** The apps some of whose events were refused. */
  readonly limited: LimitSubject[];
  /** The longest wait the limiter gave a refused app (seconds, as `Retry-After`); 0 when none was. */
  readonly retryAfterSeconds: number;
}

/**
 * Asks the limiter about every app of the request in one call: its work grows with the request's
 * events, which SLUICE_MAX_EVENTS_PER_REQUEST bounds, so a relay's request of many apps makes
 * progress for each of them at its limit. No limiter: every event passes.
 */
export async function applyRateLimits<Row>(
  limiter: EventRateLimiter | null,
  groups: AppGroup<Row>[],
  mode: 'partial' | 'whole',
): Promise<LimitStep<Row>> {
  const step: LimitStep<Row> = { passed: [], verdicts: [], overLimit: [], limited: [], retryAfterSeconds: 0 };
  if (limiter === null) return { ...step, passed: groups };
  const grants = await limiter.spend(
    groups.map((g) => ({ subject: g.subject, events: g.candidates.length, mode })),
  );
  let retryAfterSeconds = 0;
  groups.forEach((g, i) => {
    const grant = grants[i];
    const n = g.candidates.length;
    const granted = grant === undefined ? 0 : Math.min(grant.granted, n);
    step.verdicts.push({
      result: granted === n ? 'allowed' : granted === 0 ? 'limited' : 'partial',
      store: grant?.store ?? 'memory',
    });
    if (granted === n) step.passed.push(g);
    else if (granted > 0)
      step.passed.push({ subject: g.subject, candidates: g.candidates.slice(0, granted) });
    if (granted < n) {
      step.limited.push(g.subject);
      for (let j = granted; j < n; j++) step.overLimit.push(g.candidates[j] as Candidate<Row>);
      retryAfterSeconds = Math.max(retryAfterSeconds, retryAfterFromMs(grant?.retryAfterMs ?? 0));
    }
  });
  return { ...step, retryAfterSeconds };
}
