import { Counter, Gauge, type Registry } from 'prom-client';

/** Instruments of admission: rate-limit decisions and authentication. */
export function createAdmissionMetrics(registry: Registry) {
  const r = [registry];
  return {
    decisions: new Counter({
      name: 'sluice_ratelimit_decisions_total',
      help: 'Rate-limit decisions (one per app per request), by result and by the store that counted.',
      labelNames: ['result', 'store'] as const,
      registers: r,
    }),
    redisErrors: new Counter({
      name: 'sluice_ratelimit_redis_errors_total',
      help: 'Rate-limit calls to Redis that failed or timed out (the insurance limiter answered).',
      registers: r,
    }),
    fallbackActive: new Gauge({
      name: 'sluice_ratelimit_fallback_active',
      help: '1 while rate limits are counted by the in-memory insurance limiter instead of Redis.',
      registers: r,
    }),
    authFailures: new Counter({
      name: 'sluice_auth_failures_total',
      help: 'Requests refused by authentication, by reason.',
      labelNames: ['reason'] as const,
      registers: r,
    }),
  };
}

export type AdmissionMetrics = ReturnType<typeof createAdmissionMetrics>;
