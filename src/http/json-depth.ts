const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/**
 * Whether a JSON text nests arrays/objects deeper than `maxDepth` (a top-level array or object is
 * level 1), read from the raw bytes before anything parses them. It must run before `JSON.parse`:
 * V8 builds one object per bracket, so a 1 MiB body of `[` costs tens of times a normal 1 MiB body
 * to parse, and that CPU would be gone before a check on the parsed value could refuse it.
 *
 * One pass, no allocation, and it stops at the first bracket past `maxDepth`. String contents are
 * skipped with `indexOf` (a quote preceded by an odd run of backslashes is escaped), so brackets
 * inside strings do not count. On valid JSON the answer is exact; on invalid JSON it may be either,
 * and `JSON.parse` refuses the body afterwards anyway.
 */
export function exceedsJsonDepth(text: Uint8Array, maxDepth: number): boolean {
  const end = text.length;
  let depth = 0;
  let i = 0;
  while (i < end) {
    const c = text[i] as number;
    if (c === QUOTE) {
      i = afterString(text, i + 1);
      continue;
    }
    if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > maxDepth) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
    i++;
  }
  return false;
}

/** Index just past the quote that closes a string whose contents start at `start` (or `text.length`). */
function afterString(text: Uint8Array, start: number): number {
  let from = start;
  for (;;) {
    const quote = text.indexOf(QUOTE, from);
    if (quote < 0) return text.length;
    let backslashes = 0;
    // Bounded by `from`: each byte between two quotes is looked at once, so the scan stays linear.
    for (let j = quote - 1; j >= from && text[j] === BACKSLASH; j--) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}
