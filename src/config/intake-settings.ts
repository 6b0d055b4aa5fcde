import { accepting, duration, integer, nonEmpty, oneOf, wholeSeconds } from './parsers';
import { setting } from './setting';

/** `redis://` or `rediss://` URL. */
function redisUrl() {
  return accepting('redis:// or rediss:// URL', (raw: string): string => {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new Error('must be a URL such as redis://127.0.0.1:6379');
    }
    if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
      throw new Error('must start with redis:// or rediss://');
    }
    return raw;
  });
}

/** `app=limit,app=limit`, limits in events per second. */
function overrides() {
  return accepting('app=events_per_second,…', (raw: string): ReadonlyMap<string, number> => {
    const out = new Map<string, number>();
    for (const part of raw
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)) {
      const m = /^([^=\s]+)=(\d+)$/.exec(part);
      if (!m)
        throw new Error(`must be a comma-separated list of app=events_per_second (bad entry "${part}")`);
      out.set(m[1] as string, Number(m[2]));
    }
    return out;
  });
}

/** `*`, or a comma-separated list of origins such as `https://shop.example`. */
function origins() {
  return accepting('*, or origins, comma-separated', (raw: string): readonly string[] => {
    const list = raw
      .split(',')
      .map((o) => o.trim())
      .filter(Boolean);
    for (const o of list) {
      if (o === '*') continue;
      let url: URL;
      try {
        url = new URL(o);
      } catch {
        throw new Error(
          `must be * or a comma-separated list of origins like https://app.example (bad entry "${o}")`,
        );
      }
      if (url.origin !== o) throw new Error(`entry "${o}" is not an origin (scheme://host[:port], no path)`);
    }
    return list;
  });
}

/** Settings of intake: rate limits (memory or Redis), API keys, CORS. */
export const INTAKE_SETTINGS = {
  rateLimit: setting({
    env: 'SLUICE_RATE_LIMIT',
    default: '100',
    doc: 'Events per second per app (per API key when auth is on); error events are never limited. 0 turns limiting off.',
    parse: integer(0, 10_000_000),
  }),
  rateLimitBurst: setting({
    env: 'SLUICE_RATE_LIMIT_BURST',
    default: '10s',
    doc: "How much of an app's limit it may send at once, as time at the limit (whole seconds): in one process a token bucket holds this much of it, with Redis a window of this length does. A client that flushes every few seconds (the SDK: every 5 s) sends a flush whole.",
    parse: wholeSeconds(1000, 3_600_000),
  }),
  rateLimitOverrides: setting({
    env: 'SLUICE_RATE_LIMIT_OVERRIDES',
    doc: 'Per-app limits: app=events_per_second,… (wins over SLUICE_RATE_LIMIT).',
    parse: overrides(),
  }),
  rateLimitOverridesFile: setting({
    env: 'SLUICE_RATE_LIMIT_OVERRIDES_FILE',
    doc: 'JSON file {"app": events_per_second, …}; read and validated at start.',
    parse: nonEmpty(),
  }),
  maxAppsPerMinute: setting({
    env: 'SLUICE_MAX_APPS_PER_MINUTE',
    default: '10000',
    doc: "Most distinct apps (`source.app`) a collector takes events from in a minute. An app taken in a minute is taken in the next; a new one only while the apps of the two minutes are fewer than this. Events of others are rejected (`too_many_apps`) and counted in the loss map under app `''` (`app=`), never one count per refused name. Without keys any client names any app: this bounds what invented names cost storage, its lists and its jobs. A relay (an OpenTelemetry Collector, a gateway) forwards the apps of all its senders: raise it above their number. 0: no bound.",
    parse: integer(0, 10_000_000),
  }),
  redisUrl: setting({
    env: 'SLUICE_REDIS_URL',
    doc: 'Redis for cluster-wide rate limits. Unset: limits are counted in this process.',
    parse: redisUrl(),
  }),
  redisTimeoutMs: setting({
    env: 'SLUICE_REDIS_TIMEOUT_MS',
    default: '100',
    doc: 'Longest a rate-limit call waits for Redis before the insurance limiter answers it (the Redis client’s command timeout).',
    parse: duration(5, 10_000, 'ms'),
  }),
  redisLeaseMs: setting({
    env: 'SLUICE_REDIS_LEASE_MS',
    default: '100',
    doc: "Budget each collector leases from Redis at a time, as milliseconds of an app's limit (100: a tenth, at least 1 event), spent locally without a round trip. N collectors may admit up to N such blocks beyond the shared budget's own bound. 0: every decision asks Redis.",
    parse: duration(0, 1000, 'ms'),
  }),
  redisKeyPrefix: setting({
    env: 'SLUICE_REDIS_KEY_PREFIX',
    default: 'sluice:rl',
    doc: 'Prefix of rate-limit keys in Redis (collectors sharing limits share it).',
    parse: nonEmpty(),
  }),
  expectedInstances: setting({
    env: 'SLUICE_EXPECTED_INSTANCES',
    default: '1',
    doc: 'Collectors sharing the limit: the insurance limiter allows SLUICE_RATE_LIMIT ÷ this while Redis is away.',
    parse: integer(1, 10_000),
  }),
  authKeysFile: setting({
    env: 'SLUICE_AUTH_KEYS_FILE',
    doc: 'JSON file of hashed ingest keys and read tokens; set to turn auth on (see docs/operations.md, "API keys").',
    parse: nonEmpty(),
  }),
  protectedMode: setting({
    env: 'SLUICE_PROTECTED_MODE',
    default: 'on',
    doc: 'With no API keys (`SLUICE_AUTH_KEYS_FILE` unset): `on` answers the read API, the console and `GET /pipeline` to loopback clients only (`403 protected_mode` to others; a request a proxy forwarded for another address is not loopback), while writes stay open to every client; `off` opens them to every client that can reach the port. No effect when keys are set: read tokens guard them (docs/operations.md, "Protected mode").',
    parse: oneOf(['on', 'off'] as const),
  }),
  corsOrigins: setting({
    env: 'SLUICE_CORS_ORIGINS',
    doc: 'Origins allowed to call the API from a browser (`POST /v1/events`, and the read API with a read token): `*` or a comma-separated list. Unset: no CORS headers.',
    parse: origins(),
  }),
} as const;
