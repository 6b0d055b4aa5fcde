/** Parsers for configuration values. Each throws a message that says what is allowed. */
export type Parser<T> = ((raw: string) => T) & {
  /** What the parser takes, for the configuration reference (e.g. `1–65535`, `1h–3650d`). */
  readonly accepts?: string;
};

/** `parse` with the text the configuration reference shows for it. */
export function accepting<T>(accepts: string, parse: (raw: string) => T): Parser<T> {
  return Object.assign(parse, { accepts });
}

export function integer(min: number, max: number): Parser<number> {
  return accepting(`${min}–${max}`, (raw) => {
    const trimmed = raw.trim();
    if (!/^-?\d+$/.test(trimmed)) throw new Error(`must be an integer between ${min} and ${max}`);
    const n = Number(trimmed);
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new Error(`must be an integer between ${min} and ${max}`);
    }
    return n;
  });
}

/** Byte units, case-insensitive: the binary ones are powers of 1024, the decimal ones of 1000. */
const BYTE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kib: 1024,
  kb: 1000,
  m: 1024 ** 2,
  mib: 1024 ** 2,
  mb: 1000 ** 2,
  g: 1024 ** 3,
  gib: 1024 ** 3,
  gb: 1000 ** 3,
};

/** What a size may be written as, for error messages and the configuration reference. */
export const BYTE_UNITS_TEXT =
  'a number of bytes, or with a unit: KiB, MiB, GiB (K, M, G: the same, powers of 1024; MiB = 1048576 bytes) ' +
  'or KB, MB, GB (powers of 1000; MB = 1000000 bytes)';

/** `1048576` → `1MiB`, `1500` → `1500`: the largest binary unit that divides it. */
export function formatBytes(n: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (n >= size && n % size === 0) return `${n / size}${unit}`;
  }
  return String(n);
}

/** Bytes: a plain integer or one with a unit (`512KiB`, `64MiB`, `1GiB`, `10MB`). */
export function bytes(min: number, max: number): Parser<number> {
  return accepting(`${formatBytes(min)}–${formatBytes(max)}`, (raw) => {
    const m = /^\s*(\d+)\s*([a-zA-Z]*)\s*$/.exec(raw);
    const unit = m ? BYTE_UNITS[(m[2] ?? '').toLowerCase()] : undefined;
    const n = m && unit !== undefined ? Number(m[1]) * unit : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new Error(
        `must be a size between ${formatBytes(min)} and ${formatBytes(max)}: ${BYTE_UNITS_TEXT}`,
      );
    }
    return n;
  });
}

const DURATION_UNITS = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
} as const;

type DurationUnit = keyof typeof DURATION_UNITS;

/** `3_600_000` → `1h`, `1500` → `1500ms`: the largest unit that divides it. */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0';
  for (const unit of ['w', 'd', 'h', 'm', 's'] as const) {
    const size = DURATION_UNITS[unit];
    // Weeks only when days would read worse (3650d stays 3650d, not 521w3d).
    if (ms % size === 0 && (unit !== 'w' || ms / size <= 52)) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/**
 * A duration in milliseconds: `250ms`, `30s`, `15m`, `12h`, `7d`, `2w`, or a plain number of
 * `defaultUnit`. Limits are shown in those units.
 */
export function duration(minMs: number, maxMs: number, defaultUnit: DurationUnit): Parser<number> {
  const range = `${formatDuration(minMs)}–${formatDuration(maxMs)}`;
  return accepting(`${range} (a bare number: ${defaultUnit})`, (raw) => {
    const m = /^\s*(\d+)\s*(ms|s|m|h|d|w)?\s*$/.exec(raw);
    const unit = (m?.[2] ?? defaultUnit) as DurationUnit;
    const ms = m ? Number(m[1]) * DURATION_UNITS[unit] : NaN;
    if (!Number.isSafeInteger(ms) || ms < minMs || ms > maxMs) {
      throw new Error(
        `must be a duration between ${formatDuration(minMs)} and ${formatDuration(maxMs)} ` +
          `(a number of ${defaultUnit}, or with a unit: ms, s, m, h, d, w)`,
      );
    }
    return ms;
  });
}

/** A `duration` (milliseconds) that is a whole number of seconds: `10s`, `2m`, or a bare number of seconds. */
export function wholeSeconds(minMs: number, maxMs: number): Parser<number> {
  const parse = duration(minMs, maxMs, 's');
  return accepting(`${parse.accepts ?? ''}, whole seconds`, (raw) => {
    const ms = parse(raw);
    if (ms % 1000 !== 0) throw new Error('must be a whole number of seconds, such as 10s');
    return ms;
  });
}

export function oneOf<T extends string>(values: readonly T[]): Parser<T> {
  return accepting(values.join(', '), (raw) => {
    const v = raw.trim() as T;
    if (!values.includes(v)) throw new Error(`must be one of: ${values.join(', ')}`);
    return v;
  });
}

export function postgresUrl(): Parser<string> {
  return accepting('postgres:// URL', (raw) => {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new Error('must be a URL such as postgres://user@host:5432/sluice');
    }
    if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
      throw new Error('must start with postgres:// or postgresql://');
    }
    return raw;
  });
}

export function nonEmpty(): Parser<string> {
  return accepting('text', (raw) => {
    if (raw.trim() === '') throw new Error('must not be empty');
    return raw;
  });
}
