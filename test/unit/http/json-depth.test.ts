import fc from 'fast-check';
import { exceedsJsonDepth } from '../../../src/http/json-depth';

const bytes = (text: string): Buffer => Buffer.from(text, 'utf8');

/** Nesting depth of a parsed value (the value itself is level 1): the reference the scan must agree with. */
function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + children.reduce<number>((d, child) => Math.max(d, depthOf(child)), 0);
}

describe('exceedsJsonDepth (raw bytes, before parsing)', () => {
  it('counts nesting of arrays and objects', () => {
    expect(exceedsJsonDepth(bytes('{"a":[{"b":{}}]}'), 4)).toBe(false);
    expect(exceedsJsonDepth(bytes('{"a":[{"b":{"c":[]}}]}'), 4)).toBe(true);
    expect(exceedsJsonDepth(bytes('[1,"x",true,null]'), 1)).toBe(false);
    expect(exceedsJsonDepth(bytes('[1,[2]]'), 1)).toBe(true);
    expect(exceedsJsonDepth(bytes('42'), 1)).toBe(false);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    expect(exceedsJsonDepth(bytes('{"a":"[[[[[[{{{{\\"[[[["}'), 1)).toBe(false);
    expect(exceedsJsonDepth(bytes('{"a\\\\":"\\\\\\"[[[","b":"\\\\"}'), 1)).toBe(false);
    // The string ends at the quote after an even run of backslashes: the brackets after it count.
    expect(exceedsJsonDepth(bytes('{"a":"\\\\\\\\","b":[[]]}'), 2)).toBe(true);
    expect(exceedsJsonDepth(bytes('{"é[[":"😀[[[","b":{}}'), 2)).toBe(false);
  });

  it('agrees with the depth of the parsed value on any JSON', () => {
    fc.assert(
      fc.property(fc.json({ depthSize: 'medium' }), fc.integer({ min: 1, max: 12 }), (text, maxDepth) => {
        const expected = depthOf(JSON.parse(text)) > maxDepth;
        expect(exceedsJsonDepth(bytes(text), maxDepth)).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('stops at the first bracket past the limit, and an unterminated string is not a hang', () => {
    expect(exceedsJsonDepth(bytes('['.repeat(1_000_000)), 8)).toBe(true);
    expect(exceedsJsonDepth(bytes(`["${'\\"'.repeat(100_000)}`), 8)).toBe(false);
  });
});
