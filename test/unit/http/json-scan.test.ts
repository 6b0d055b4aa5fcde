import fc from 'fast-check';
import { wireShapeBudget } from '../../../src/events/wire-shape';
import { repeatedTopLevelMember, scanJson, type JsonShapeLimits } from '../../../src/http/json-scan';

const bytes = (text: string): Buffer => Buffer.from(text, 'utf8');
const UNBOUNDED = { maxContainers: Infinity, maxSeparators: Infinity };
const depthOnly = (maxDepth: number): JsonShapeLimits => ({ maxDepth, ...UNBOUNDED });
const tooDeep = (text: string, maxDepth: number): boolean =>
  scanJson(bytes(text), depthOnly(maxDepth)) === 'too_deep';

/** The reference the scan must agree with, computed on the parsed value. */
function shapeOf(value: unknown): { depth: number; containers: number; separators: number } {
  if (typeof value !== 'object' || value === null) return { depth: 0, containers: 0, separators: 0 };
  const isArray = Array.isArray(value);
  const children = isArray ? value : Object.values(value);
  const inner = children.map(shapeOf);
  return {
    depth: 1 + Math.max(0, ...inner.map((s) => s.depth)),
    containers: 1 + inner.reduce((n, s) => n + s.containers, 0),
    // `,` between children, plus one `:` per member of an object.
    separators:
      Math.max(0, children.length - 1) +
      (isArray ? 0 : children.length) +
      inner.reduce((n, s) => n + s.separators, 0),
  };
}

describe('scanJson (raw bytes, before parsing)', () => {
  it('counts nesting of arrays and objects', () => {
    expect(tooDeep('{"a":[{"b":{}}]}', 4)).toBe(false);
    expect(tooDeep('{"a":[{"b":{"c":[]}}]}', 4)).toBe(true);
    expect(tooDeep('[1,"x",true,null]', 1)).toBe(false);
    expect(tooDeep('[1,[2]]', 1)).toBe(true);
    expect(tooDeep('42', 1)).toBe(false);
  });

  it('does not count brackets, commas or colons inside strings, escaped quotes included', () => {
    expect(tooDeep('{"a":"[[[[[[{{{{\\"[[[["}', 1)).toBe(false);
    expect(tooDeep('{"a\\\\":"\\\\\\"[[[","b":"\\\\"}', 1)).toBe(false);
    // The string ends at the quote after an even run of backslashes: the brackets after it count.
    expect(tooDeep('{"a":"\\\\\\\\","b":[[]]}', 2)).toBe(true);
    expect(tooDeep('{"é[[":"😀[[[","b":{}}', 2)).toBe(false);
    const limits = { maxDepth: 8, maxContainers: 1, maxSeparators: 1 };
    expect(scanJson(bytes('{"a,b:c,{[":"x,y:z,[{"}'), limits)).toBe('within');
  });

  it('agrees with the shape of the parsed value on any JSON', () => {
    fc.assert(
      fc.property(
        fc.json({ depthSize: 'medium' }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 0, max: 80 }),
        (text, maxDepth, maxContainers, maxSeparators) => {
          const s = shapeOf(JSON.parse(text));
          expect(scanJson(bytes(text), depthOnly(maxDepth))).toBe(s.depth > maxDepth ? 'too_deep' : 'within');
          const counted = scanJson(bytes(text), { maxDepth: 64, maxContainers, maxSeparators });
          const over = s.containers > maxContainers || s.separators > maxSeparators;
          expect(counted).toBe(over ? 'too_many_values' : 'within');
        },
      ),
      { numRuns: 500 },
    );
  });

  it('finds where long strings end, with escapes at any offset', () => {
    // Strings up to 3 × the bytes looked at one by one before the rest is searched natively.
    const piece = fc.constantFrom('a', '\\', '"', '[', ',', ':', '{', 'é', '\n', '😀');
    const text = fc.array(piece, { maxLength: 80, size: 'max' }).map((p) => p.join(''));
    fc.assert(
      fc.property(fc.array(text, { maxLength: 6 }), (strings) => {
        const json = JSON.stringify(Object.fromEntries(strings.map((s, k) => [`${s}${k}`, [s, { [s]: s }]])));
        const s = shapeOf(JSON.parse(json));
        const exact = { maxDepth: s.depth, maxContainers: s.containers, maxSeparators: s.separators };
        expect(scanJson(bytes(json), exact)).toBe('within');
        expect(scanJson(bytes(json), { ...exact, maxDepth: s.depth - 1 })).toBe('too_deep');
        expect(scanJson(bytes(json), { ...exact, maxContainers: s.containers - 1 })).toBe('too_many_values');
      }),
      { numRuns: 500 },
    );
  });

  it('stops at the first bracket past the limit, and an unterminated string is not a hang', () => {
    expect(scanJson(bytes('['.repeat(1_000_000)), depthOnly(8))).toBe('too_deep');
    expect(scanJson(bytes(`["${'\\"'.repeat(100_000)}`), depthOnly(8))).toBe('within');
  });
});

describe('wireShapeBudget', () => {
  it('fits the largest request of the contract twice over, and refuses bodies of tiny values', () => {
    const limits = { maxAttributes: 32 };
    const budget = { maxDepth: 8, ...wireShapeBudget(limits, 1000) };
    const attributes = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`k${i}`, i]));
    const full = {
      id: '0190f3c2-0000-7000-8000-000000000001',
      type: 'error',
      name: 'a',
      ts: 1,
      source: { app: 'a', version: '1', env: 'p' },
      value: null,
      summary: { count: 1, min: 1, max: 1, sum: 1, avg: 1 },
      error: { message: 'm', kind: 'k', stack: 's' },
      message: 'm',
      attributes,
      unknownField: 1,
    };
    const largest = JSON.stringify({ events: Array.from({ length: 1000 }, () => full) });
    expect(scanJson(bytes(largest), budget)).toBe('within');

    expect(scanJson(bytes(`{"events":[],"x":[${'1,'.repeat(500_000)}0]}`), budget)).toBe('too_many_values');
    expect(scanJson(bytes(`{"events":[],"x":[${'{},'.repeat(300_000)}0]}`), budget)).toBe('too_many_values');
  });
});

describe('repeatedTopLevelMember (raw bytes)', () => {
  const repeated = (text: string): string | null => repeatedTopLevelMember(bytes(text));

  it('finds a member the top-level object gives twice, as JSON.parse names it', () => {
    expect(repeated('{"events":[1],"events":[2]}')).toBe('events');
    expect(repeated('{"events":[],"report":{},"report":null}')).toBe('report');
    expect(repeated('{"events":[], "\\u0065vents":[]}')).toBe('events');
    expect(repeated(' { "a" : 1 , "b" : "a" , "a" : 2 } ')).toBe('a');
  });

  it('ignores names repeated in nested objects, and strings that only look like names', () => {
    expect(repeated('{"events":[{"id":1,"id":2}],"report":{"a":1,"a":2}}')).toBeNull();
    expect(repeated('{"a":"b","b":["a","a"],"c":{"a":{"b":1}}}')).toBeNull();
    expect(repeated('{"a\\"":1,"a":2}')).toBeNull();
    expect(repeated('[{"a":1},{"a":1}]')).toBeNull();
  });

  it('agrees with JSON.parse on generated objects', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('events', 'report', 'x', 'é', 'a"b'), fc.jsonValue()), {
          maxLength: 6,
        }),
        (members) => {
          const text = `{${members.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`;
          const names = members.map(([k]) => k);
          const twice = names.find((k, i) => names.indexOf(k) !== i) ?? null;
          // The first name seen a second time.
          expect(repeated(text)).toBe(twice);
        },
      ),
    );
  });
});
