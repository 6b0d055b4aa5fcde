import fc from 'fast-check';
import {
  checkedNativeSlices,
  latin1Text,
  NATIVE_SLICES_IN_USE,
  PUBLIC_SLICES,
  utf8Text,
} from '../../../src/events/scan/byte-range';

const CHANGED =
  "Node's Buffer.prototype.latin1Slice / utf8Slice are gone or no longer match Buffer#toString: " +
  'src/events/scan/byte-range.ts now slices through the public fallback. Measure the `internals` ' +
  'bench suite and drop the internals if they are no longer worth it.';

/**
 * src/events/scan/byte-range.ts slices through Node internals only when a start-up check finds
 * them behaving as the public API does; these tests fail loudly when this Node changed them.
 */
describe("byte-range's use of Node's internal Buffer slices", () => {
  it('finds the internals on this Node and uses them', () => {
    expect({ nativeSlicesInUse: NATIVE_SLICES_IN_USE, why: CHANGED }).toEqual({
      nativeSlicesInUse: true,
      why: CHANGED,
    });
  });

  it('refuses internals that are missing, throw, or answer differently', () => {
    const wrong = () => 'x';
    const throws = () => {
      throw new Error('gone');
    };
    expect(checkedNativeSlices({})).toBeNull();
    expect(checkedNativeSlices({ latin1Slice: Buffer.prototype.toString })).toBeNull();
    expect(checkedNativeSlices({ latin1Slice: wrong, utf8Slice: wrong })).toBeNull();
    expect(checkedNativeSlices({ latin1Slice: throws, utf8Slice: throws })).toBeNull();
    const utf8AsLatin1 = { latin1Slice: PUBLIC_SLICES.latin1, utf8Slice: PUBLIC_SLICES.latin1 };
    expect(checkedNativeSlices(utf8AsLatin1)).toBeNull();
    expect(checkedNativeSlices(Buffer.prototype)).not.toBeNull();
  });

  it('slices any range as Buffer#toString does, through the internals and the fallback', () => {
    const ranges = fc
      .uint8Array({ maxLength: 64 })
      .chain((bytes) =>
        fc
          .tuple(fc.nat({ max: bytes.length }), fc.nat({ max: bytes.length }))
          .map(([a, b]) => [Buffer.from(bytes), Math.min(a, b), Math.max(a, b)] as const),
      );
    fc.assert(
      fc.property(ranges, ([text, start, end]) => {
        const latin1 = text.toString('latin1', start, end);
        const utf8 = text.toString('utf8', start, end);
        expect(latin1Text(text, start, end)).toBe(latin1);
        expect(PUBLIC_SLICES.latin1.call(text, start, end)).toBe(latin1);
        expect(utf8Text(text, start, end)).toBe(utf8);
        expect(PUBLIC_SLICES.utf8.call(text, start, end)).toBe(utf8);
      }),
    );
  });
});
