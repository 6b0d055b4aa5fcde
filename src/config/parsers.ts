/** Parsers for configuration values. Each throws a message that says what is allowed. */
export type Parser<T> = (raw: string) => T;

export function integer(min: number, max: number): Parser<number> {
  return (raw) => {
    const trimmed = raw.trim();
    if (!/^-?\d+$/.test(trimmed)) throw new Error(`must be an integer between ${min} and ${max}`);
    const n = Number(trimmed);
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new Error(`must be an integer between ${min} and ${max}`);
    }
    return n;
  };
}

const BYTE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1000,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1000 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1000 ** 3,
  gib: 1024 ** 3,
};

/** Bytes: a plain integer or one with a unit (`512KiB`, `64MiB`, `1GiB`, `10MB`). */
export function bytes(min: number, max: number): Parser<number> {
  return (raw) => {
    const m = /^\s*(\d+)\s*([a-zA-Z]*)\s*$/.exec(raw);
    const unit = m ? BYTE_UNITS[(m[2] ?? '').toLowerCase()] : undefined;
    const n = m && unit !== undefined ? Number(m[1]) * unit : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new Error(`must be a byte size between ${min} and ${max} (e.g. 1048576, 512KiB, 64MiB)`);
    }
    return n;
  };
}

const DURATION_UNITS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** A duration in milliseconds: `250ms`, `30s`, `15m`, `12h`, `7d`, or a plain number of `defaultUnit`. */
export function duration(
  minMs: number,
  maxMs: number,
  defaultUnit: keyof typeof DURATION_UNITS,
): Parser<number> {
  return (raw) => {
    const m = /^\s*(\d+)\s*(ms|s|m|h|d)?\s*$/.exec(raw);
    const ms = m ? Number(m[1]) * (DURATION_UNITS[m[2] ?? defaultUnit] ?? NaN) : NaN;
    if (!Number.isSafeInteger(ms) || ms < minMs || ms > maxMs) {
      throw new Error(
        `must be a duration between ${minMs} ms and ${maxMs} ms (a number of ${defaultUnit}, or with a unit: ms, s, m, h, d)`,
      );
    }
    return ms;
  };
}

export function oneOf<T extends string>(values: readonly T[]): Parser<T> {
  return (raw) => {
    const v = raw.trim() as T;
    if (!values.includes(v)) throw new Error(`must be one of: ${values.join(', ')}`);
    return v;
  };
}

export function postgresUrl(): Parser<string> {
  return (raw) => {
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
  };
}

export function nonEmpty(): Parser<string> {
  return (raw) => {
    if (raw.trim() === '') throw new Error('must not be empty');
    return raw;
  };
}
