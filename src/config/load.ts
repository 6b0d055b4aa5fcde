import { parseFlags, type ParsedFlags } from './flags';
import { redactSecrets } from './redact-secrets';
import { SETTINGS, type Config } from './settings';
import { closestName, findUnknownVariable } from './unknown-variables';

/**
 * A setting with a value that is not allowed. The message names the variable and shows the value
 * with any password masked (see redact-secrets.ts): it is printed to the terminal and to logs.
 */
export class ConfigError extends Error {
  /** The value as given, password masked. */
  readonly value: string;
  constructor(
    readonly variable: string,
    value: string,
    reason: string,
  ) {
    const shown = redactSecrets(value);
    super(`${variable}=${JSON.stringify(shown)} ${reason}`);
    this.name = 'ConfigError';
    this.value = shown;
  }
}

/** `SLUICE_QUEUE_CAPACITY` → `--queue-capacity`. */
export function flagOf(variable: string): string {
  return (
    '--' +
    variable
      .replace(/^SLUICE_/, '')
      .toLowerCase()
      .replace(/_/g, '-')
  );
}

/**
 * Reads `--flag value` / `--flag=value` pairs into variable names. Unknown
 * flags are an error: a typo must not silently fall back to a default.
 */
export function flagsToEnv(args: readonly string[]): Record<string, string> {
  const byFlag = new Map(Object.values(SETTINGS).map((s) => [flagOf(s.env).slice(2), s.env]));
  const spec = Object.fromEntries([...byFlag.keys()].map((name) => [name, 'value' as const]));
  let flags: ParsedFlags;
  try {
    flags = parseFlags(args, spec, true);
  } catch (err) {
    // A setting flag without its value, or given twice: the message starts with the flag.
    const [, name = '', reason = ''] = /^--([\w-]+) (.*)$/.exec((err as Error).message) ?? [];
    const variable = byFlag.get(name) ?? name;
    throw new ConfigError(
      variable,
      '',
      reason === 'needs a value' ? `needs a value (--${name} VALUE)` : reason,
    );
  }
  const unknown = flags.rest[0];
  if (unknown !== undefined) {
    const flag = unknown.split('=')[0] as string;
    const closest = closestName(
      flag,
      [...byFlag.keys()].map((name) => `--${name}`),
    );
    const hint = closest === null ? '' : `; did you mean ${closest}?`;
    throw new ConfigError(flag, unknown, `is not a known option${hint} (see sluice --help)`);
  }
  const out: Record<string, string> = {};
  for (const [name, value] of flags.values) out[byFlag.get(name) as string] = value;
  return out;
}

/**
 * Parses and validates every setting once. Flags win over the environment.
 * Throws `ConfigError` on the first bad value, and on a `SLUICE_*` variable that is no setting
 * (a typo or a retired name: see unknown-variables.ts).
 */
export function loadConfig(
  env: Readonly<Record<string, string | undefined>>,
  args: readonly string[] = [],
): Config {
  const unknown = findUnknownVariable(env);
  if (unknown !== null) throw new ConfigError(unknown.variable, env[unknown.variable] ?? '', unknown.reason);
  const source = { ...env, ...flagsToEnv(args) };
  const config: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(SETTINGS)) {
    const given = source[s.env];
    const raw = given === undefined || given === '' ? ('default' in s ? s.default : undefined) : given;
    if (raw === undefined) {
      config[key] = null;
      continue;
    }
    try {
      config[key] = s.parse(raw);
    } catch (err) {
      throw new ConfigError(s.env, raw, (err as Error).message);
    }
  }
  // The default batch follows a smaller queue; a batch size asked for explicitly must fit.
  const batchSizeGiven = source.SLUICE_BATCH_SIZE !== undefined && source.SLUICE_BATCH_SIZE !== '';
  if (!batchSizeGiven) config.batchSize = Math.min(Number(config.batchSize), Number(config.laneCapacity));
  const result = config as Config;
  if (result.batchSize > result.laneCapacity) {
    throw new ConfigError(
      'SLUICE_BATCH_SIZE',
      String(result.batchSize),
      `must not exceed SLUICE_QUEUE_CAPACITY (${result.laneCapacity})`,
    );
  }
  if (result.databaseReadUrl !== null && result.databaseUrl === null) {
    throw new ConfigError(
      'SLUICE_DATABASE_READ_URL',
      result.databaseReadUrl,
      'needs SLUICE_DATABASE_URL: a read standby is a replica of the PostgreSQL primary the collector writes to',
    );
  }
  if (result.headersTimeoutMs > result.requestTimeoutMs) {
    throw new ConfigError(
      'SLUICE_HEADERS_TIMEOUT_MS',
      String(result.headersTimeoutMs),
      `must not exceed SLUICE_REQUEST_TIMEOUT_MS (${result.requestTimeoutMs}): headers are part of the request`,
    );
  }
  if (result.drainDelayMs + result.shutdownGraceMs >= result.shutdownTimeoutMs) {
    throw new ConfigError(
      'SLUICE_SHUTDOWN_TIMEOUT_MS',
      String(result.shutdownTimeoutMs),
      `must exceed SLUICE_DRAIN_DELAY_MS + SLUICE_SHUTDOWN_GRACE_MS (${result.drainDelayMs + result.shutdownGraceMs}): the flush comes after them`,
    );
  }
  return Object.freeze(result);
}

/**
 * The options part of `--help`: each setting's variable, flag and default in aligned columns, its
 * meaning below (markdown backticks dropped). `keys` picks and orders settings; default all.
 */
export function settingsHelp(
  keys: readonly (keyof typeof SETTINGS)[] = Object.keys(SETTINGS) as never,
): string {
  const chosen = keys.map((k) => SETTINGS[k]);
  const envWidth = Math.max(...chosen.map((s) => s.env.length));
  const flagWidth = Math.max(...chosen.map((s) => flagOf(s.env).length));
  return chosen
    .map((s) => {
      const def = 'default' in s ? s.default : '(unset)';
      const head = `  ${s.env.padEnd(envWidth)}  ${flagOf(s.env).padEnd(flagWidth)}  default ${def}`;
      return `${head}\n${wrap(s.doc.replace(/`/g, ''), 96, '      ')}`;
    })
    .join('\n');
}

/** `text` cut at spaces into lines of at most `width` characters, each after `indent`. */
function wrap(text: string, width: number, indent: string): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line !== '' && indent.length + line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines.map((l) => indent + l).join('\n');
}

export type { Config } from './settings';
