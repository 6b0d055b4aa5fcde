import { sanitizeAttributes, seriesKey } from '../../../sdk/src/attributes';
import { truncate } from '../../../sdk/src/limits';

describe('sanitizeAttributes', () => {
  it('keeps strings, finite numbers and booleans; drops everything else', () => {
    const out = sanitizeAttributes({
      s: 'x',
      n: 3,
      b: false,
      nan: NaN,
      inf: Infinity,
      o: { a: 1 },
      a: [1],
      u: undefined,
      z: null,
      f: () => 1,
      big: BigInt(1),
    });
    expect({ ...out }).toEqual({ s: 'x', n: 3, b: false });
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });

  it('drops reserved and over-long keys, cuts long strings, keeps at most 32', () => {
    const raw: Record<string, unknown> = JSON.parse('{"__proto__": 1, "constructor": 2, "ok": 3}');
    raw['k'.repeat(65)] = 1;
    raw.long = 'x'.repeat(2000);
    for (let i = 0; i < 40; i++) raw[`a${i}`] = i;
    const out = sanitizeAttributes(raw)!;
    expect(Object.keys(out)).not.toContain('__proto__');
    expect(Object.keys(out)).not.toContain('constructor');
    expect(out.ok).toBe(3);
    expect(out.long).toHaveLength(1024);
    expect(Object.keys(out)).toHaveLength(32);
  });

  it('returns undefined for nothing usable', () => {
    expect(sanitizeAttributes(undefined)).toBeUndefined();
    expect(sanitizeAttributes('x')).toBeUndefined();
    expect(sanitizeAttributes([1, 2])).toBeUndefined();
    expect(sanitizeAttributes({ o: {} })).toBeUndefined();
  });
});

describe('seriesKey', () => {
  it('does not depend on attribute order', () => {
    expect(seriesKey('m', { a: 1, b: 'x' })).toBe(seriesKey('m', { b: 'x', a: 1 }));
  });

  it('tells names, values and value types apart', () => {
    const keys = [
      seriesKey('m', undefined),
      seriesKey('n', undefined),
      seriesKey('m', { a: 1 }),
      seriesKey('m', { a: '1' }),
      seriesKey('m', { a: true }),
      seriesKey('m', { a: 'true' }),
      seriesKey('m', { a: 2 }),
      seriesKey('m', { b: 1 }),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });
});

describe('truncate', () => {
  it('never ends on the first half of a surrogate pair', () => {
    const s = 'ab😀cd'; // 😀 is two UTF-16 units at 2 and 3
    expect(truncate(s, 3)).toBe('ab');
    expect(truncate(s, 4)).toBe('ab😀');
    expect(truncate('abc', 5)).toBe('abc');
    expect(truncate('abcdef', 3)).toBe('abc');
  });
});
