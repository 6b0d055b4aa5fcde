/*
 * Shapes of the contract's text (a UUID, a dotted name) written once, as tables: the class of each
 * ASCII character, and a small automaton over classes. The typed path (events/validate.ts) runs a
 * shape over a string, the single pass (events/scan/scan-event.ts) over a body's bytes, and other
 * checks of the same shape (cursors, payloads, arguments) call the same functions: a shape changed
 * here changes everywhere at once. No regular expression runs on either path.
 */

/** Character classes: each ASCII character is in exactly one; every other character is in none. */
const DIGIT = 1 << 0;
const HEX_LOWER = 1 << 1;
const HEX_UPPER = 1 << 2;
/** Letters past `f`/`F`. */
const OTHER_LETTER = 1 << 3;
const UNDERSCORE = 1 << 4;
const DASH = 1 << 5;
const DOT = 1 << 6;
const CLASS_COUNT = 8;

/** The class of each ASCII character, as an index: bit k of a set is class k + 1 (0: none). */
const CLASS_OF: Uint8Array = (() => {
  const table = new Uint8Array(128);
  const put = (from: string, to: string, set: number): void => {
    for (let c = from.charCodeAt(0); c <= to.charCodeAt(0); c++) table[c] = Math.log2(set) + 1;
  };
  put('0', '9', DIGIT);
  put('a', 'f', HEX_LOWER);
  put('A', 'F', HEX_UPPER);
  put('g', 'z', OTHER_LETTER);
  put('G', 'Z', OTHER_LETTER);
  put('_', '_', UNDERSCORE);
  put('-', '-', DASH);
  put('.', '.', DOT);
  return table;
})();

/** Sets of characters a shape is built from. */
export const CHARS = {
  /** `[0-9a-fA-F]` */
  hex: DIGIT | HEX_LOWER | HEX_UPPER,
  /** `[0-9a-f]` */
  lowerHex: DIGIT | HEX_LOWER,
  /** `[A-Za-z0-9_-]` */
  namePart: DIGIT | HEX_LOWER | HEX_UPPER | OTHER_LETTER | UNDERSCORE | DASH,
  dash: DASH,
  dot: DOT,
} as const;

/** Each class's characters as a regular expression class body, for `TextShape.source`. */
const CLASS_SOURCE: ReadonlyArray<readonly [number, string]> = [
  [DIGIT, '0-9'],
  [HEX_LOWER, 'a-f'],
  [HEX_UPPER, 'A-F'],
  [OTHER_LETTER, 'g-zG-Z'],
  [UNDERSCORE, '_'],
  [DASH, '\\-'],
  [DOT, '\\.'],
];

function setSource(set: number): string {
  return `[${CLASS_SOURCE.filter(([c]) => (set & c) !== 0)
    .map(([, s]) => s)
    .join('')}]`;
}

/**
 * A shape of text: an automaton whose states are small integers (0: refused, 1: start), stepping
 * on the class of each character.
 */
export interface TextShape {
  /** `next[state * CLASS_COUNT + class]`: the state after a character of that class. */
  readonly next: Uint8Array;
  /** `fits[state]` is 1 when text that ends in that state has the shape. */
  readonly fits: Uint8Array;
  /** The same shape as a regular expression (no anchors), for searching text that holds it. */
  readonly source: string;
}

function classesOf(set: number): number[] {
  const out: number[] = [];
  for (let k = 0; k < CLASS_COUNT - 1; k++) if ((set & (1 << k)) !== 0) out.push(k + 1);
  return out;
}

/** A shape of fixed length: runs of `count` characters of `set`, in order. */
export function fixedShape(runs: ReadonlyArray<readonly [set: number, count: number]>): TextShape {
  const length = runs.reduce((n, [, count]) => n + count, 0);
  const states = length + 2;
  const next = new Uint8Array(states * CLASS_COUNT);
  let state = 1;
  for (const [set, count] of runs) {
    for (let k = 0; k < count; k++, state++) {
      for (const c of classesOf(set)) next[state * CLASS_COUNT + c] = state + 1;
    }
  }
  const fits = new Uint8Array(states);
  fits[state] = 1;
  const source = runs.map(([set, count]) => setSource(set) + (count > 1 ? `{${count}}` : '')).join('');
  return { next, fits, source };
}

/** One or more runs of `part`, one `separator` between two runs (`a.b`, not `a..b`, `.a` or `a.`). */
export function separatedShape(part: number, separator: number): TextShape {
  const START = 1;
  const IN_PART = 2;
  const AFTER_SEPARATOR = 3;
  const next = new Uint8Array(4 * CLASS_COUNT);
  for (const c of classesOf(part)) {
    next[START * CLASS_COUNT + c] = IN_PART;
    next[IN_PART * CLASS_COUNT + c] = IN_PART;
    next[AFTER_SEPARATOR * CLASS_COUNT + c] = IN_PART;
  }
  for (const c of classesOf(separator)) next[IN_PART * CLASS_COUNT + c] = AFTER_SEPARATOR;
  const fits = new Uint8Array(4);
  fits[IN_PART] = 1;
  return { next, fits, source: `${setSource(part)}+(?:${setSource(separator)}${setSource(part)}+)*` };
}

/** Whether `text` has `shape`. */
export function hasShape(shape: TextShape, text: string): boolean {
  const { next } = shape;
  let state = 1;
  for (let k = 0; k < text.length; k++) {
    const c = text.charCodeAt(k);
    state = next[state * CLASS_COUNT + (c < 128 ? (CLASS_OF[c] as number) : 0)] as number;
    if (state === 0) return false;
  }
  return shape.fits[state] === 1;
}

/** Whether bytes `start` to `end` of `bytes` have `shape` (a byte past ASCII is in no class). */
export function bytesHaveShape(shape: TextShape, bytes: Uint8Array, start: number, end: number): boolean {
  const { next } = shape;
  let state = 1;
  for (let p = start; p < end; p++) {
    const c = bytes[p] as number;
    state = next[state * CLASS_COUNT + (c < 128 ? (CLASS_OF[c] as number) : 0)] as number;
    if (state === 0) return false;
  }
  return shape.fits[state] === 1;
}
