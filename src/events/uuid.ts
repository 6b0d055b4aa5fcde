import { bytesHaveShape, CHARS, fixedShape, hasShape, type TextShape } from './text-shape';

/** A UUID's text form (RFC 9562 §4): 32 hex digits in groups of 8-4-4-4-12. */
function uuidShape(hex: number): TextShape {
  const { dash } = CHARS;
  return fixedShape([
    [hex, 8],
    [dash, 1],
    [hex, 4],
    [dash, 1],
    [hex, 4],
    [dash, 1],
    [hex, 4],
    [dash, 1],
    [hex, 12],
  ]);
}

/** A UUID in either case, as an SDK may send it. */
export const UUID_SHAPE = uuidShape(CHARS.hex);
/** A UUID in lower case, as the collector stores and writes it. */
export const LOWER_CASE_UUID_SHAPE = uuidShape(CHARS.lowerHex);

/** Whether `text` is a UUID (hex digits of either case). */
export function isUuid(text: string): boolean {
  return hasShape(UUID_SHAPE, text);
}

/** Whether `text` is a UUID in lower case, the form storage holds. */
export function isLowerCaseUuid(text: string): boolean {
  return hasShape(LOWER_CASE_UUID_SHAPE, text);
}

/** Whether bytes `start` to `end` of `bytes` are a UUID (hex digits of either case). */
export function bytesAreUuid(bytes: Uint8Array, start: number, end: number): boolean {
  return bytesHaveShape(UUID_SHAPE, bytes, start, end);
}
