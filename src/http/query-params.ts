import { SluiceError } from '../errors/catalogue';
import { cutText, isStorableText } from '../events/cut-text';
import { decodeCursor, type EventCursor } from './event-cursor';
import { parseTimestamp } from './timestamp';

type Query = Record<string, unknown>;

/** Longest parameter name echoed in an answer; a longer (unknown) name is cut. */
const MAX_ECHOED_NAME = 64;

/**
 * Reads typed query parameters; every failure is a 400 `invalid_parameter`
 * that names the parameter. Unknown parameters are refused too: a typo such
 * as `form=` must not silently widen a query. Every value that passes can be
 * bound as it is on either storage (no U+0000, no lone surrogate, types that
 * cast), so no parameter can turn into a 500.
 */
export class QueryParams {
  constructor(
    private readonly query: Query,
    allowed: readonly string[],
    /** Families of parameters named by a prefix, e.g. `attr.` for `attr.route`. */
    private readonly allowedPrefixes: readonly string[] = [],
  ) {
    for (const key of Object.keys(query)) {
      if (!allowed.includes(key) && !allowedPrefixes.some((p) => key.startsWith(p))) {
        const all = [...allowed, ...allowedPrefixes.map((p) => `${p}<key>`)];
        throw invalid(key, `unknown parameter; allowed: ${all.join(', ')}`);
      }
    }
  }

  string(name: string, maxLength = 256): string | undefined {
    const v = this.query[name];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || v.length === 0 || v.length > maxLength) {
      throw invalid(name, `must be given once, as a non-empty string of at most ${maxLength} characters`);
    }
    if (!isStorableText(v)) throw invalid(name, 'must be UTF-8 text without U+0000');
    return v;
  }

  /** A parameter that must be given, the empty string included (`app=`). */
  requiredStringOrEmpty(name: string, maxLength = 256): string {
    const v = this.query[name];
    if (v === '') return v;
    return this.requiredString(name, maxLength);
  }

  requiredString(name: string, maxLength = 256): string {
    const v = this.string(name, maxLength);
    if (v === undefined) throw invalid(name, 'is required');
    return v;
  }

  integer(name: string, min: number, max: number): number | undefined {
    const v = this.string(name, 20);
    if (v === undefined) return undefined;
    const n = /^-?\d+$/.test(v) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw invalid(name, `must be an integer between ${min} and ${max}`);
    }
    return n;
  }

  /**
   * A point in time: milliseconds since the Unix epoch, or an ISO 8601 date (`2026-12-02`, UTC
   * midnight) or date-time with a zone (`2026-12-02T12:00:00Z`, `…+01:00`). See timestamp.ts.
   */
  time(name: string): number | undefined {
    const v = this.string(name, 40);
    if (v === undefined) return undefined;
    const ms = parseTimestamp(v);
    if (ms === null) {
      throw invalid(
        name,
        'must be milliseconds since the Unix epoch or an ISO 8601 date or date-time with a zone (e.g. 2026-12-02T12:00:00Z)',
      );
    }
    return ms;
  }

  /**
   * The parameters named `<prefix><key>` as (key, value) pairs, at most `max`; each key 1 to
   * `maxKeyLength` characters, each value given once.
   */
  prefixed(prefix: string, max: number, maxKeyLength: number): Array<{ key: string; value: string }> {
    const out: Array<{ key: string; value: string }> = [];
    for (const name of Object.keys(this.query)) {
      if (!name.startsWith(prefix)) continue;
      const key = name.slice(prefix.length);
      if (key.length === 0 || key.length > maxKeyLength || !isStorableText(key)) {
        throw invalid(name, `must name a key of 1 to ${maxKeyLength} characters after "${prefix}"`);
      }
      if (out.length === max)
        throw invalid(name, `is one too many: at most ${max} ${prefix}<key> parameters`);
      out.push({ key, value: this.requiredString(name) });
    }
    return out;
  }

  /** A keyset cursor returned by `GET /v1/events` (see event-cursor.ts). */
  cursor(name: string): EventCursor | undefined {
    const v = this.string(name, 128);
    if (v === undefined) return undefined;
    const cursor = decodeCursor(v);
    if (cursor === null) throw invalid(name, 'is not a cursor returned by this API');
    return cursor;
  }

  oneOf<T extends string>(name: string, values: readonly T[]): T | undefined {
    const v = this.string(name, 64);
    if (v === undefined) return undefined;
    if (!(values as readonly string[]).includes(v))
      throw invalid(name, `must be one of: ${values.join(', ')}`);
    return v as T;
  }
}

export function invalid(parameter: string, problem: string): SluiceError {
  const name = JSON.stringify(cutText(parameter, MAX_ECHOED_NAME)).slice(1, -1);
  return new SluiceError('invalid_parameter', `Query parameter "${name}" ${problem}.`);
}
