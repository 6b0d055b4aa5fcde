import fc from 'fast-check';
import { cutText, isStorableText, storableText } from '../../../src/events/cut-text';

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

describe('storableText', () => {
  it('replaces what storage cannot hold and cuts with the marker, keeping surrogate pairs whole', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 60 }),
        fc.integer({ min: 16, max: 40 }),
        (text, max) => {
          const out = storableText(text, max);
          expect(isStorableText(out)).toBe(true);
          expect(out.length).toBeLessThanOrEqual(max);
        },
      ),
    );
    expect(storableText(`${'x'.repeat(7)}😀yyyyyyyyyyyyyyyy`, 20)).toBe('xxxxxxx…[truncated]');
    expect(storableText('a\u0000b\ud800', 20)).toBe('a\uFFFDb\uFFFD');
  });
});
