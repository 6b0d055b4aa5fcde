/*
 * Buffer methods the single pass calls per token, through references taken once. Looked up on a
 * Buffer inside optimized code, each such method is a generic property load (V8's LoadIC builtin)
 * on every call: 6 % of a collector's main-thread instructions under the bench's load. The native
 * slices also skip `toString`'s argument checks, which these callers do not need: their ranges lie
 * inside the text.
 *
 * `latin1Slice` and `utf8Slice` are Node internals, not public API. They are used only when a
 * check at load finds them and finds them answering as `Buffer#toString` does on a probe of every
 * UTF-8 length; otherwise the public fallback below slices (slower, never wrong).
 * test/unit/runtime/node-internals.test.ts fails loudly on a Node where the check does not pass;
 * the `internals` bench suite measures what the internals are worth.
 */

type Slice = (this: Uint8Array, start: number, end: number) => string;

interface NativeSlices {
  latin1Slice: Slice;
  utf8Slice: Slice;
}

/** The public API's slices: a Buffer view of the range (an object per call) and its `toString`. */
export const PUBLIC_SLICES: Readonly<{ latin1: Slice; utf8: Slice }> = {
  latin1(start, end) {
    return Buffer.from(this.buffer, this.byteOffset + start, end - start).toString('latin1');
  },
  utf8(start, end) {
    return Buffer.from(this.buffer, this.byteOffset + start, end - start).toString('utf8');
  },
};

/** ASCII, a 2-, 3- and 4-byte UTF-8 character; ranges that cut characters are probed too. */
const PROBE = Buffer.from('xa\u00e9\u20ac\u{1f600}z', 'utf8');
const PROBE_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0, PROBE.length],
  [1, 4],
  [3, PROBE.length - 1],
  [5, 5],
];

/**
 * `proto`'s `latin1Slice` and `utf8Slice` when both exist and give what the public slices give on
 * every probe range; null when either is missing, throws, or answers differently.
 */
export function checkedNativeSlices(proto: object): { latin1: Slice; utf8: Slice } | null {
  const { latin1Slice, utf8Slice } = proto as Partial<NativeSlices>;
  if (typeof latin1Slice !== 'function' || typeof utf8Slice !== 'function') return null;
  try {
    for (const [start, end] of PROBE_RANGES) {
      if (latin1Slice.call(PROBE, start, end) !== PUBLIC_SLICES.latin1.call(PROBE, start, end)) return null;
      if (utf8Slice.call(PROBE, start, end) !== PUBLIC_SLICES.utf8.call(PROBE, start, end)) return null;
    }
  } catch {
    return null;
  }
  return { latin1: latin1Slice, utf8: utf8Slice };
}

const native = checkedNativeSlices(Buffer.prototype);

/** Whether this process slices through Node's internal `latin1Slice` and `utf8Slice`. */
export const NATIVE_SLICES_IN_USE: boolean = native !== null;

const { indexOf } = Buffer.prototype;
const latin1Slice: Slice = native?.latin1 ?? PUBLIC_SLICES.latin1;
const utf8Slice: Slice = native?.utf8 ?? PUBLIC_SLICES.utf8;

/** Index of the first byte `byte` at or after `from` in `text`, or -1. */
export function indexOfByte(text: Uint8Array, byte: number, from: number): number {
  return indexOf.call(text, byte, from);
}

/** Bytes `start` to `end` of `text` as Latin-1 text, one character per byte. */
export function latin1Text(text: Uint8Array, start: number, end: number): string {
  return latin1Slice.call(text, start, end);
}

/** Bytes `start` to `end` of `text` decoded as UTF-8 (the bytes were checked to be UTF-8). */
export function utf8Text(text: Uint8Array, start: number, end: number): string {
  return utf8Slice.call(text, start, end);
}

/** Whether bytes `aStart` to `aEnd` of `text` equal bytes `bStart` onwards. */
export function sameBytes(text: Uint8Array, aStart: number, aEnd: number, bStart: number): boolean {
  for (let k = 0; k < aEnd - aStart; k++) if (text[aStart + k] !== text[bStart + k]) return false;
  return true;
}
