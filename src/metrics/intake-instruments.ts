import { type Registry } from 'prom-client';
import { counter, gauge, histogram } from './define';

/** Instruments of intake: rate-limit decisions and authentication. */
export function createIntakeMetrics(registry: Registry) {
  return {
    decisions: counter(
      registry,
      'sluice_ratelimit_decisions_total',
      'Rate-limit decisions (one per app per request), by result and by the store that counted.',
      ['result', 'store'],
    ),
    redisErrors: counter(
      registry,
      'sluice_ratelimit_redis_errors_total',
      'Rate-limit calls to Redis that failed or timed out (the insurance limiter answered).',
    ),
    fallbackActive: gauge(
      registry,
      'sluice_ratelimit_fallback_active',
      '1 while rate limits are counted by the in-memory insurance limiter instead of Redis.',
    ),
    leaseFetches: counter(
      registry,
      'sluice_ratelimit_lease_fetches_total',
      'Script calls that take budget from Redis: trigger="short" when a request waited for it (its lease did not cover it), "ahead" in the background before the lease ran out.',
      ['trigger'],
    ),
    leaseFetchFailures: counter(
      registry,
      'sluice_ratelimit_lease_fetch_failures_total',
      'Script calls to Redis that failed or timed out, by trigger (also in sluice_ratelimit_redis_errors_total).',
      ['trigger'],
    ),
    leaseTokens: counter(
      registry,
      'sluice_ratelimit_lease_tokens_total',
      'Lease tokens by fate: "leased" (taken from Redis ahead of requests), "returned" (given back to Redis), "expired" (dropped unused after one window).',
      ['fate'],
    ),
    advice: histogram(
      registry,
      'sluice_sampling_advice',
      'Sample rates advised in answers, one per app of each answer that carries advice (docs/http-api.md, "Sampling advice"): below 1 while an app is over its limit or the collector overloaded.',
      [],
      [0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.99, 1],
    ),
    appsAdmitted: gauge(
      registry,
      'sluice_apps_taken',
      'Distinct apps (source.app) this collector took events from in the current minute, against SLUICE_MAX_APPS_PER_MINUTE (past it, events of new apps are rejected: too_many_apps).',
    ),
    authFailures: counter(
      registry,
      'sluice_auth_failures_total',
      'Requests refused by authentication, by reason.',
      ['reason'],
    ),
  };
}

export type IntakeMetrics = ReturnType<typeof createIntakeMetrics>;
