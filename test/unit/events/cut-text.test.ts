import fc from 'fast-check';
import { cutText, isStorableText } from '../../../src/events/cut-text';

const wellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

describe('cutText', () => {
  it('leaves text within the limit as it is', () => {
    expect(cutText('abc', 3)).toBe('abc');
  });

  it('never splits a surrogate pair and never exceeds the limit', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 40 }),
        fc.integer({ min: 1, max: 60 }),
        (text, max) => {
          const cut = cutText(text, max);
          expect(cut.length).toBeLessThanOrEqual(max);
          expect(wellFormed(cut)).toBe(true);
          if (cut !== text) expect(text.startsWith(cut.slice(0, -1))).toBe(true);
        },
      ),
    );
  });
});

describe('isStorableText', () => {
  it.each([
    ['plain text', 'héllo 🚀', true],
    ['NUL', 'a\u0000', false],
    ['a lone high surrogate', 'a\ud83d', false],
    ['a lone low surrogate', '\ude80a', false],
    ['U+FFFD itself', '\uFFFD', true],
  ])('%s', (_label, text, storable) => {
    expect(isStorableText(text)).toBe(storable);
  });
});
