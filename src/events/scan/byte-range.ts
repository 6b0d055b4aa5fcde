/*
 * Buffer methods the single pass calls per token, through references taken once. Looked up on a
 * Buffer inside optimized code, each such method is a generic property load (V8's LoadIC builtin)
 * on every call: 6 % of a collector's main-thread instructions under the bench's load. The native
 * slices also skip `toString`'s argument checks, which these callers do not need: their ranges lie
 * inside the text.
 */

interface NativeSlices {
  latin1Slice(this: Uint8Array, start: number, end: number): string;
  utf8Slice(this: Uint8Array, start: number, end: number): string;
}

const { indexOf } = Buffer.prototype;
const { latin1Slice, utf8Slice } = Buffer.prototype as unknown as NativeSlices;

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
