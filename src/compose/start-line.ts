/**
 * The collector's start line (one log line): where it listens, its tier, mode and storage, who may
 * write and who may read, and its limits, so that an operator reads in one place what a start
 * chose. Part of the composition root: it reads the config and what compose/ decided.
 */
import type { Config } from '../config/load';
import { redactSecrets } from '../config/redact-secrets';

/** What the start line says besides the config. */
export interface StartFacts {
  /** A URL of the API from this host, e.g. `http://127.0.0.1:8080`. */
  readonly url: string;
  /** The port the API listens on (on `SLUICE_HOST`). */
  readonly port: number;
  /** The OTLP receiver's port (on `SLUICE_HOST`); null when it is off. */
  readonly otlpPort: number | null;
  /** Whether API keys are configured (`SLUICE_AUTH_KEYS_FILE`). */
  readonly keys: boolean;
}

/** Who may write and who may read, as the start line and its fields say it. */
export function accessOf(
  config: Pick<Config, 'protectedMode'>,
  keys: boolean,
): { writes: string; reads: string } {
  if (keys) return { writes: 'ingest keys', reads: 'read tokens' };
  if (config.protectedMode === 'on')
    return { writes: 'open to every client', reads: 'loopback clients only' };
  return { writes: 'open to every client', reads: 'open to every client' };
}

/** The tier the config runs (README, "Tiers"). */
export function tierOf(config: Pick<Config, 'mode' | 'databaseUrl' | 'redisUrl'>): 1 | 2 | 3 | 4 {
  if (config.mode === 'ingest') return 4;
  if (config.databaseUrl === null) return 1;
  return config.redisUrl === null ? 2 : 3;
}

function perSecond(n: number): string {
  return n === 0 ? 'no rate limit' : `${n} events/s per app`;
}

/** The start line's message and its fields (the same facts, for log queries). */
export function startLine(
  config: Config,
  facts: StartFacts,
): { fields: Record<string, unknown>; message: string } {
  const tier = tierOf(config);
  const storage =
    config.databaseUrl === null
      ? `SQLite ${config.sqlitePath}`
      : `PostgreSQL ${redactSecrets(config.databaseUrl)}`;
  const access = accessOf(config, facts.keys);
  const overrides = (config.rateLimitOverrides?.size ?? 0) + (config.rateLimitOverridesFile === null ? 0 : 1);
  const limits = [
    `${perSecond(config.rateLimit)}${overrides > 0 ? ' (with per-app overrides)' : ''}${config.redisUrl === null ? '' : ', counted in Redis'}`,
    config.maxAppsPerMinute === 0
      ? 'no bound on distinct apps'
      : `${config.maxAppsPerMinute} distinct apps a minute`,
    `${config.maxEventsPerRequest} events and ${config.maxBodyBytes} bytes per request`,
  ];
  const opening = facts.keys
    ? ''
    : config.protectedMode === 'on'
      ? ' (protected mode: set SLUICE_AUTH_KEYS_FILE for keys, or SLUICE_PROTECTED_MODE=off to open reads)'
      : ' (SLUICE_PROTECTED_MODE=off: anyone who reaches the port reads every event; set SLUICE_AUTH_KEYS_FILE)';
  const where = config.host === '0.0.0.0' || config.host === '::' ? ' (every interface)' : '';
  const message =
    `sluice listening on ${config.host}${where} port ${facts.port}` +
    (facts.otlpPort === null ? ', OTLP off' : `, OTLP/HTTP port ${facts.otlpPort}`) +
    ` · tier ${tier}, mode ${config.mode}, ${storage}, ack ${config.ack}` +
    ` · auth ${facts.keys ? 'on' : 'off'}: writes ${access.writes}; reads, console and /pipeline ${access.reads}${opening}` +
    ` · limits: ${limits.join('; ')}`;
  return {
    message,
    fields: {
      url: facts.url,
      host: config.host,
      port: facts.port,
      otlpPort: facts.otlpPort ?? 'off',
      tier,
      mode: config.mode,
      storage: config.databaseUrl === null ? 'sqlite' : 'postgres',
      ack: config.ack,
      auth: facts.keys ? 'on' : 'off',
      protectedMode: !facts.keys && config.protectedMode === 'on',
      writes: access.writes,
      reads: access.reads,
      rateLimitPerSecond: config.rateLimit,
      maxAppsPerMinute: config.maxAppsPerMinute,
    },
  };
}
