import type { Principal } from '../auth/api-keys';
import type { OutcomeOrigin } from '../loss-map/outcome';
import type { LimitSubject } from '../ratelimit/event-rate-limiter';
import type { AppAdvice } from './intake-answer';
import type { SamplingAdvisor } from './sampling-advice';

/** What the advice reads of a sorted request. */
export interface AdvisedRequest {
  readonly principal: Principal | null;
  readonly now: number;
  readonly origin: OutcomeOrigin;
  /** Per app, what the request's client report says its senders captured; absent without a report. */
  readonly captured: ReadonlyMap<string, number> | undefined;
  /** The request's non-error events by app. */
  readonly byApp: ReadonlyMap<string, readonly unknown[]>;
  readonly errors: readonly { readonly app: string }[];
}

/** Who a limit counts for an app of this request: the app, or the API key it came with. */
export function subjectOf(request: { readonly principal: Principal | null }, app: string): LimitSubject {
  const { principal } = request;
  return { key: principal ? `key:${principal.keyId}` : `app:${app}`, app };
}

/**
 * Tells the advisor what the request's senders generated: what its client report says they
 * captured (before sampling), else its own events a limit applies to.
 */
export function tellDemand(advisor: SamplingAdvisor | undefined, request: AdvisedRequest): void {
  if (advisor === undefined) return;
  if (request.captured !== undefined) {
    for (const [app, n] of request.captured) advisor.demand(subjectOf(request, app), n, request.now);
  } else {
    for (const [app, events] of request.byApp)
      advisor.demand(subjectOf(request, app), events.length, request.now);
  }
}

const NO_ADVICE: readonly AppAdvice[] = [];

/** The rate advised to each app of the request: to an SDK's request always, else only below 1. */
export function adviceFor(
  advisor: SamplingAdvisor | undefined,
  request: AdvisedRequest,
): readonly AppAdvice[] {
  if (advisor === undefined) return NO_ADVICE;
  const apps = new Set(request.byApp.keys());
  for (const c of request.errors) apps.add(c.app);
  const advice: AppAdvice[] = [];
  for (const app of apps) {
    const sampleRate = advisor.advice(subjectOf(request, app), request.now);
    if (sampleRate < 1 || request.origin === 'sdk') advice.push({ app, sampleRate });
  }
  return advice;
}
