import { SluiceError } from '../errors/catalogue';

type Query = Record<string, unknown>;

/**
 * Reads typed query parameters; every failure is a 400 `invalid_parameter`
 * that names the parameter. Unknown parameters are refused too: a typo such
 * as `form=` must not silently widen a query.
 */
export class QueryParams {
  constructor(
    private readonly query: Query,
    allowed: readonly string[],
  ) {
    for (const key of Object.keys(query)) {
      if (!allowed.includes(key)) {
        throw invalid(key, `unknown parameter; allowed: ${allowed.join(', ')}`);
      }
    }
  }

  string(name: string, maxLength = 256): string | undefined {
    const v = this.query[name];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || v.length === 0 || v.length > maxLength) {
      throw invalid(name, `must be given once, as a non-empty string of at most ${maxLength} characters`);
    }
    return v;
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

  oneOf<T extends string>(name: string, values: readonly T[]): T | undefined {
    const v = this.string(name, 64);
    if (v === undefined) return undefined;
    if (!(values as readonly string[]).includes(v))
      throw invalid(name, `must be one of: ${values.join(', ')}`);
    return v as T;
  }
}

export function invalid(parameter: string, problem: string): SluiceError {
  return new SluiceError('invalid_parameter', `Query parameter "${parameter}" ${problem}.`);
}
