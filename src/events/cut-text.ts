/** The marker that ends text cut to its limit (an error stack, or a string an OTLP record carried). */
export const TRUNCATED = '…[truncated]';

/**
 * `text` cut to at most `maxLength` UTF-16 code units, ending with `marker` when anything was cut.
 * The cut never falls between the two halves of a surrogate pair: a lone half is not text (it
 * cannot be encoded as UTF-8 and would be stored as U+FFFD).
 */
export function cutText(text: string, maxLength: number, marker = '…'): string {
  if (text.length <= maxLength) return text;
  let end = Math.max(0, maxLength - marker.length);
  if (end > 0 && isHighSurrogate(text.charCodeAt(end - 1))) end--;
  return text.slice(0, end) + marker;
}

/** The first half of a surrogate pair: text only when a low half follows at once. */
export function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** The second half of a surrogate pair: text only right after a high half. */
export function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** U+0000: PostgreSQL text and jsonb cannot hold it, so no stored text has it. */
export const NUL = 0x0000;

/** `String.prototype.isWellFormed` / `toWellFormed` (Node 20; ES2024, newer than the compiler's lib). */
type WellFormed = { isWellFormed(): boolean; toWellFormed(): string };

/**
 * Whether `text` can be stored exactly as sent: well-formed Unicode (no lone surrogate, which UTF-8
 * cannot encode) and no `NUL`. The single pass applies the same rule to a string's escapes
 * (events/scan/json-text.ts), with `isHighSurrogate`, `isLowSurrogate` and `NUL`.
 */
export function isStorableText(text: string): boolean {
  return (text as unknown as WellFormed).isWellFormed() && !text.includes(NUL_TEXT);
}

const NUL_TEXT = String.fromCharCode(NUL);

/**
 * `text` made storable and kept within `maxLength`, for fronts that translate records of another
 * protocol (OTLP) and keep what they can rather than refuse: U+0000 and lone surrogates become
 * U+FFFD, and text over the limit is cut (`cutText`) and ends in `TRUNCATED`.
 */
export function storableText(text: string, maxLength: number): string {
  const wellFormed = (text as unknown as WellFormed).toWellFormed();
  const clean = wellFormed.includes(NUL_TEXT) ? wellFormed.replaceAll(NUL_TEXT, '\uFFFD') : wellFormed;
  return cutText(clean, maxLength, TRUNCATED);
}
