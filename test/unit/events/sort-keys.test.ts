import fc from 'fast-check';
import { sortKeys } from '../../../src/events/sort-keys';

describe('sortKeys', () => {
  it('orders keys exactly as Array.prototype.sort does, short lists and long', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary' }), { maxLength: 80 }), (keys) => {
        const expected = [...keys].sort();
        const sorted = [...keys];
        sortKeys(sorted);
        expect(sorted).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('orders by UTF-16 code unit: an astral character sorts below U+FFFF', () => {
    const keys = ['\uffff', '\u{1f600}', 'b', 'a', 'B'];
    sortKeys(keys);
    expect(keys).toEqual(['B', 'a', 'b', '\u{1f600}', '\uffff']);
  });

  it('leaves sorted keys as they are, duplicates included', () => {
    const keys = ['a', 'a', 'b', 'c'];
    sortKeys(keys);
    expect(keys).toEqual(['a', 'a', 'b', 'c']);
  });
});
