/**
 * Assembly of the rate limits and API keys from config: part of the composition root. Files named by the config are read and validated here,
 * once, at start; a bad one is a `ConfigError` naming its variable.
 */
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import { ApiKeyRing, KeysFileError } from '../auth/api-keys';
import type { Clock } from '../clock';
import { ConfigError, type Config } from '../config/load';
import type { Logger } from '../log/logger';
import { createIntakeMetrics, type IntakeMetrics } from '../metrics/intake-instruments';
import { RateLimits, type EventRateLimiter } from '../ratelimit/event-rate-limiter';
import { MemoryRateLimiter } from '../ratelimit/memory-rate-limiter';
import { RedisRateLimiter } from '../ratelimit/redis-rate-limiter';
import { keepStringPrototypeFast } from '../runtime/fast-string-prototype';

// Loading ioredis (imported above) turned String.prototype into a dictionary (see the function).
keepStringPrototypeFast();

export interface RateLimitsAndKeys {
  readonly rateLimiter: EventRateLimiter | null;
  /** Each app's limit (events per second, 0: none). */
  readonly limits: RateLimits;
  /** Redis's part in the limits: `off` without SLUICE_REDIS_URL. */
  readonly redisHealth: () => 'off' | 'up' | 'down' | 'insurance';
  readonly keyRing: ApiKeyRing | null;
  readonly metrics: IntakeMetrics;
  /** Closes the Redis client and limiters. */
  close(): Promise<void>;
}

function readConfigFile(variable: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(variable, path, `cannot be read: ${(err as Error).message}`);
  }
}

/** Parses `{"app": events_per_second, …}`. */
export function parseOverridesFile(text: string, path: string): Map<string, number> {
  const fail = (why: string) => new ConfigError('SLUICE_RATE_LIMIT_OVERRIDES_FILE', path, why);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw fail(`is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw fail('must hold a JSON object {"app": events_per_second, …}');
  }
  const out = new Map<string, number>();
  for (const [app, limit] of Object.entries(doc)) {
    if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 0) {
      throw fail(`has a bad limit for "${app}": must be an integer ≥ 0 (events per second; 0 = unlimited)`);
    }
    out.set(app, limit);
  }
  return out;
}

export function rateLimitsFrom(config: Config): RateLimits {
  const overrides = new Map<string, number>();
  if (config.rateLimitOverridesFile !== null) {
    const text = readConfigFile('SLUICE_RATE_LIMIT_OVERRIDES_FILE', config.rateLimitOverridesFile);
    for (const [app, n] of parseOverridesFile(text, config.rateLimitOverridesFile)) overrides.set(app, n);
  }
  for (const [app, n] of config.rateLimitOverrides ?? []) overrides.set(app, n);
  return new RateLimits(config.rateLimit, overrides, config.rateLimitBurst / 1000);
}

export function keyRingFrom(config: Config): ApiKeyRing | null {
  if (config.authKeysFile === null) return null;
  try {
    return ApiKeyRing.parse(
      readConfigFile('SLUICE_AUTH_KEYS_FILE', config.authKeysFile),
      config.authKeysFile,
    );
  } catch (err) {
    if (err instanceof KeysFileError)
      throw new ConfigError('SLUICE_AUTH_KEYS_FILE', config.authKeysFile, err.message);
    throw err;
  }
}

export function createRateLimitsAndKeys(
  config: Config,
  registry: Registry,
  clock: Clock,
  logger: Logger,
): RateLimitsAndKeys {
  const metrics = createIntakeMetrics(registry);
  const limits = rateLimitsFrom(config);
  const keyRing = keyRingFrom(config);
  const unlimited = limits.defaultPerSecond === 0 && [...limits.overrides.values()].every((n) => n === 0);
  const off = () => 'off' as const;
  if (unlimited) {
    return { rateLimiter: null, limits, redisHealth: off, keyRing, metrics, close: async () => undefined };
  }
  if (config.redisUrl === null) {
    return {
      rateLimiter: new MemoryRateLimiter(limits, clock),
      limits,
      redisHealth: off,
      keyRing,
      metrics,
      close: async () => undefined,
    };
  }
  const log = logger.child({ component: 'ratelimit' });
  // No offline queue and a command timeout: a call to a dead or frozen Redis fails fast instead of waiting.
  const redis = new Redis(config.redisUrl, {
    enableOfflineQueue: false,
    // A request consults the limiter once per app, all in the same tick: one write and one read
    // for all of them instead of a round trip each.
    enableAutoPipelining: true,
    commandTimeout: config.redisTimeoutMs,
    connectTimeout: Math.max(config.redisTimeoutMs, 1000),
    maxRetriesPerRequest: 0,
    retryStrategy: (times) => Math.min(100 * times, 1000),
    lazyConnect: false,
  });
  let lastError = '';
  redis.on('error', (err: Error) => {
    if (err.message !== lastError) log.warn({ err }, 'Redis connection error');
    lastError = err.message;
  });
  redis.on('ready', () => {
    lastError = '';
    log.info('Redis connected');
  });
  const rateLimiter = new RedisRateLimiter({
    redis,
    limits,
    keyPrefix: config.redisKeyPrefix,
    expectedInstances: config.expectedInstances,
    leaseMs: config.redisLeaseMs,
    clock,
    logger: log,
    metrics,
  });
  return {
    rateLimiter,
    limits,
    redisHealth: () => rateLimiter.health,
    keyRing,
    metrics,
    async close() {
      await rateLimiter.close();
      redis.disconnect();
    },
  };
}
