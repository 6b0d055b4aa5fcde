import { indexOfByte } from '../events/scan/byte-range';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** Bounds on the shape of a JSON text, checked on its raw bytes. */
export interface JsonShapeLimits {
  /** Deepest nesting of arrays and objects (a top-level array or object is level 1). */
  readonly maxDepth: number;
  /** Most arrays and objects in the whole text. */
  readonly maxContainers: number;
  /** Most `,` and `:` separators in the whole text (about two per member or element). */
  readonly maxSeparators: number;
}

export type JsonShapeVerdict = 'within' | 'too_deep' | 'too_many_values';

/**
 * Checks a JSON text against `limits` on its raw bytes, before anything parses it. It must run
 * before `JSON.parse`: V8 builds an object per bracket and a value per separator, so a 1 MiB body
 * of `[` (or of `{},` or `1,`) costs many times a normal 1 MiB body to parse, and that CPU would be
 * gone before a check on the parsed value could refuse it.
 *
 * One pass, no allocation; it stops at the first limit passed. String contents are skipped with
 * `indexOf` (a quote preceded by an odd run of backslashes is escaped), so brackets, commas and
 * colons inside strings do not count. On valid JSON the answer is exact; on invalid JSON it may be
 * either, and `JSON.parse` refuses the body afterwards anyway.
 */
export function scanJson(text: Uint8Array, limits: JsonShapeLimits): JsonShapeVerdict {
  const end = text.length;
  let depth = 0;
  let containers = 0;
  let separators = 0;
  let i = 0;
  while (i < end) {
    const c = text[i] as number;
    if (c === QUOTE) {
      i = afterString(text, i + 1);
      continue;
    }
    if (c === COMMA || c === COLON) {
      if (++separators > limits.maxSeparators) return 'too_many_values';
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > limits.maxDepth) return 'too_deep';
      if (++containers > limits.maxContainers) return 'too_many_values';
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
    i++;
  }
  return 'within';
}

/** Index just past the quote that closes a string whose contents start at `start` (or `text.length`). */
function afterString(text: Uint8Array, start: number): number {
  let from = start;
  for (;;) {
    const quote = indexOfByte(text, QUOTE, from);
    if (quote < 0) return text.length;
    let backslashes = 0;
    // Bounded by `from`: each byte between two quotes is looked at once, so the scan stays linear.
    for (let j = quote - 1; j >= from && text[j] === BACKSLASH; j--) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/**
 * The first member name the top-level object of a JSON text gives twice, or null. `JSON.parse`
 * keeps the last value of a repeated member and drops the others without a word, so a body of
 * `{"events": [A], "events": [B]}` would lose A unseen: the caller refuses it instead. Names are
 * compared as `JSON.parse` reads them (`"\u0065vents"` is `events`). One pass, like `scanJson`; on
 * invalid JSON the answer is meaningless, and `JSON.parse` refuses the text anyway.
 */
export function repeatedTopLevelMember(text: Uint8Array): string | null {
  const end = text.length;
  const names = new Set<string>();
  let depth = 0;
  // Inside the top-level object, a string right after `{` or `,` is a member name.
  let expectName = false;
  let i = 0;
  while (i < end) {
    const c = text[i] as number;
    if (c === QUOTE) {
      const close = afterString(text, i + 1);
      if (depth === 1 && expectName) {
        const raw = Buffer.from(text.buffer, text.byteOffset + i, close - i).toString('utf8');
        const name = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
        if (names.has(name)) return name;
        names.add(name);
      }
      expectName = false;
      i = close;
      continue;
    }
    if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      depth++;
      expectName = depth === 1 && c === OPEN_OBJECT;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    } else if (c === COMMA) {
      expectName = depth === 1;
    }
    i++;
  }
  return null;
}
