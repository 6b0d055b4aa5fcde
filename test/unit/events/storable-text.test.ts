import fc from 'fast-check';
import { isStorableText } from '../../../src/events/cut-text';
import { readString, Token } from '../../../src/events/scan/json-text';

/** `s` as a JSON string whose every character past ASCII, and every control character, is a `\u` escape. */
function escaped(s: string): string {
  let out = '"';
  for (let k = 0; k < s.length; k++) {
    const c = s.charCodeAt(k);
    out += c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c ? `\\u${c.toString(16).padStart(4, '0')}` : s[k];
  }
  return `${out}"`;
}

const text = fc
  .array(fc.constantFrom('a', '\u0000', '\ud800', '\udbff', '\udc00', '\udfff', '😀', 'é', '"', '\\', '\n'), {
    maxLength: 8,
  })
  .map((parts) => parts.join(''));

describe('storable text', () => {
  it('is one rule: the single pass refuses the escapes validation refuses as text', () => {
    const t = new Token();
    fc.assert(
      fc.property(fc.oneof(text, fc.string({ unit: 'binary', maxLength: 8 })), (s) => {
        const json = Buffer.from(escaped(s));
        expect(readString(json, 0, t)).toBe(json.length);
        expect(t.unstorable).toBe(!isStorableText(s));
        expect(t.units).toBe(s.length);
      }),
      { numRuns: 2000 },
    );
  });
});
