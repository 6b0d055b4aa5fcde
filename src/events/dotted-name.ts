import { bytesHaveShape, CHARS, hasShape, separatedShape } from './text-shape';

/** An event's name: runs of `[A-Za-z0-9_-]` joined by single dots, such as `render.frame_drop`. */
export const DOTTED_NAME_SHAPE = separatedShape(CHARS.namePart, CHARS.dot);

/** Whether `text` is a dotted name (its length is bounded apart: `EventLimits.maxNameLength`). */
export function isDottedName(text: string): boolean {
  return hasShape(DOTTED_NAME_SHAPE, text);
}

/** Whether bytes `start` to `end` of `bytes` are a dotted name. */
export function bytesAreDottedName(bytes: Uint8Array, start: number, end: number): boolean {
  return bytesHaveShape(DOTTED_NAME_SHAPE, bytes, start, end);
}
