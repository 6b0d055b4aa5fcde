/*
 * Strict JSON (RFC 8259) read straight from UTF-8 bytes, for the single pass (scan-request.ts).
 * The bytes were checked to be UTF-8 before: a string's bytes are text, and no encoded surrogate
 * can occur in them. Every function takes the text and a position and answers a position (or -1:
 * not JSON), so nothing is allocated per token; what a token held is left in a `Token` the caller
 * owns.
 */

import { isHighSurrogate, isLowSurrogate, NUL } from '../cut-text';
import { latin1Text } from './byte-range';

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;

/** What the last string or number read held. Reused: one per scanner. */
export class Token {
  /** First byte of a string's contents (after the quote), or of a number. */
  start = 0;
  /** Just past a string's contents (at the closing quote), or past a number. */
  end = 0;
  /** A string's length in UTF-16 code units (as JavaScript counts it). */
  units = 0;
  /** A string holds an escape sequence (its bytes are not its text). */
  escaped = false;
  /** A string holds `\u0000` or a lone surrogate escape: JSON, but no text storage keeps. */
  unstorable = false;
  /** Highest byte of a string's contents (0x7f or below: ASCII). */
  highByte = 0;
  /** A number is an integer written without fraction or exponent. */
  plainInteger = false;
  /**
   * A number is written as JavaScript writes its value (`String(n)`, `JSON.stringify`): its text
   * can be copied as it is. True for a plain integer of at most 15 digits (not `-0`), and for a
   * decimal without exponent of at most 15 digits, not ending in 0, of magnitude 1e-6 or more.
   */
  canonical = false;
  /** Digits of a number, and those after its point. */
  digits = 0;
  fractionDigits = 0;
}

/** Powers of ten a double holds exactly. */
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);

/** Index of the first byte at or after `i` that is not JSON whitespace. */
export function skipSpace(text: Uint8Array, i: number): number {
  const end = text.length;
  while (i < end) {
    const c = text[i] as number;
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
  return i;
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20;
  if (l >= 0x61 && l <= 0x66) return l - 0x61 + 10;
  return -1;
}

/** The code unit of the `\uXXXX` whose `u` is at `i`, or -1. */
export function unicodeEscape(text: Uint8Array, i: number): number {
  if (i + 4 >= text.length) return -1;
  let v = 0;
  for (let k = 1; k <= 4; k++) {
    const h = hexValue(text[i + k] as number);
    if (h < 0) return -1;
    v = (v << 4) | h;
  }
  return v;
}

/**
 * Reads a string whose opening quote is at `i`; answers the index past its closing quote, or -1
 * when it is not a JSON string (a raw control character, a bad escape, no closing quote).
 */
export function readString(text: Uint8Array, i: number, t: Token): number {
  // Most strings are short ASCII without escapes: one loop finds the closing quote and checks each
  // byte before it. (A native search for the quote costs more than these bytes in call overhead,
  // and the bytes before it would have to be checked after it anyway.)
  const start = i + 1;
  const end = text.length;
  for (let q = start; q < end; q++) {
    const c = text[q] as number;
    if (c === QUOTE) {
      t.start = start;
      t.end = q;
      t.units = q - start;
      t.escaped = false;
      t.unstorable = false;
      t.highByte = 0x7f;
      return q + 1;
    }
    if (c < 0x20 || c === BACKSLASH || c > 0x7f) return readStringSlowly(text, i, t);
  }
  return -1;
}

function readStringSlowly(text: Uint8Array, i: number, t: Token): number {
  const end = text.length;
  let p = i + 1;
  t.start = p;
  let units = 0;
  let high = 0;
  let escaped = false;
  let unstorable = false;
  while (p < end) {
    const c = text[p] as number;
    if (c === QUOTE) {
      t.end = p;
      t.units = units;
      t.escaped = escaped;
      t.unstorable = unstorable;
      t.highByte = high;
      return p + 1;
    }
    if (c < 0x20) return -1;
    if (c === BACKSLASH) {
      escaped = true;
      const e = text[p + 1];
      if (e === 0x75) {
        const u = unicodeEscape(text, p + 1);
        if (u < 0) return -1;
        p += 6;
        units++;
        // Storable text as events/cut-text.ts defines it: no NUL, no lone surrogate.
        if (u === NUL) unstorable = true;
        else if (isHighSurrogate(u)) {
          const next = text[p] === BACKSLASH && text[p + 1] === 0x75 ? unicodeEscape(text, p + 1) : -1;
          if (isLowSurrogate(next)) {
            p += 6;
            units++;
          } else unstorable = true;
        } else if (isLowSurrogate(u)) unstorable = true;
        continue;
      }
      if (
        e !== QUOTE &&
        e !== BACKSLASH &&
        e !== 0x2f &&
        e !== 0x62 &&
        e !== 0x66 &&
        e !== 0x6e &&
        e !== 0x72 &&
        e !== 0x74
      ) {
        return -1;
      }
      p += 2;
      units++;
      continue;
    }
    if (c > high) high = c;
    // UTF-16 length: one unit per character, two for one past U+FFFF (a 4-byte sequence).
    if ((c & 0xc0) !== 0x80) units += c >= 0xf0 ? 2 : 1;
    p++;
  }
  return -1;
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

/** Reads a number starting at `i`; answers the index past it, or -1 when it is not a JSON number. */
export function readNumber(text: Uint8Array, i: number, t: Token): number {
  let p = i;
  t.start = i;
  if (text[p] === 0x2d) p++;
  const intStart = p;
  if (text[p] === 0x30) p++;
  else if (isDigit(text[p])) while (isDigit(text[p])) p++;
  else return -1;
  let digits = p - intStart;
  let fraction = 0;
  let exponent = false;
  if (text[p] === 0x2e) {
    p++;
    if (!isDigit(text[p])) return -1;
    const from = p;
    while (isDigit(text[p])) p++;
    fraction = p - from;
    digits += fraction;
  }
  const e = text[p];
  if (e === 0x65 || e === 0x45) {
    exponent = true;
    p++;
    if (text[p] === 0x2b || text[p] === 0x2d) p++;
    if (!isDigit(text[p])) return -1;
    while (isDigit(text[p])) p++;
  }
  t.end = p;
  t.plainInteger = fraction === 0 && !exponent;
  t.digits = digits;
  t.fractionDigits = fraction;
  t.canonical = false;
  if (!exponent && digits <= 15) {
    if (fraction === 0) t.canonical = !(text[i] === 0x2d && text[intStart] === 0x30);
    // 1e-6 and more: `String` writes smaller magnitudes with an exponent.
    else t.canonical = text[p - 1] !== 0x30 && Math.abs(numberValue(text, t)) >= 1e-6;
  }
  return p;
}

/** The value of the number `t` last read (as `JSON.parse` gives it). */
export function numberValue(text: Uint8Array, t: Token): number {
  const { start, end } = t;
  // Up to 15 digits, the digits as an integer are exact in a double, and so is 10^fraction: one
  // correctly rounded division gives what parsing the text gives, without a string.
  if (t.digits <= 15 && (t.plainInteger || end - start === t.digits + 1 + (text[start] === 0x2d ? 1 : 0))) {
    let p = start;
    const negative = text[p] === 0x2d;
    if (negative) p++;
    let v = 0;
    for (; p < end; p++) {
      const c = text[p] as number;
      if (c !== 0x2e) v = v * 10 + (c - 0x30);
    }
    if (t.fractionDigits > 0) v /= POW10[t.fractionDigits] as number;
    return negative ? -v : v;
  }
  return Number(latin1Text(text, start, end));
}

/** Whether the literal `word` (`true`, `false`, `null`) starts at `i`. */
export function isLiteral(text: Uint8Array, i: number, word: string): boolean {
  for (let k = 0; k < word.length; k++) if (text[i + k] !== word.charCodeAt(k)) return false;
  return true;
}

/**
 * Skips any one JSON value starting at `i` (after whitespace), checking it strictly; answers the
 * index past it, or -1 when it is not JSON. Nesting is bounded before the scan (json-scan.ts), so
 * the recursion is too.
 */
export function skipValue(text: Uint8Array, i: number, t: Token): number {
  const c = text[i];
  if (c === QUOTE) return readString(text, i, t);
  if (c === OPEN_OBJECT) {
    let p = skipSpace(text, i + 1);
    if (text[p] === CLOSE_OBJECT) return p + 1;
    for (;;) {
      if (text[p] !== QUOTE) return -1;
      p = readString(text, p, t);
      if (p < 0) return -1;
      p = skipSpace(text, p);
      if (text[p] !== COLON) return -1;
      p = skipValue(text, skipSpace(text, p + 1), t);
      if (p < 0) return -1;
      p = skipSpace(text, p);
      if (text[p] === CLOSE_OBJECT) return p + 1;
      if (text[p] !== COMMA) return -1;
      p = skipSpace(text, p + 1);
    }
  }
  if (c === OPEN_ARRAY) {
    let p = skipSpace(text, i + 1);
    if (text[p] === CLOSE_ARRAY) return p + 1;
    for (;;) {
      p = skipValue(text, p, t);
      if (p < 0) return -1;
      p = skipSpace(text, p);
      if (text[p] === CLOSE_ARRAY) return p + 1;
      if (text[p] !== COMMA) return -1;
      p = skipSpace(text, p + 1);
    }
  }
  if (c === 0x74) return isLiteral(text, i, 'true') ? i + 4 : -1;
  if (c === 0x66) return isLiteral(text, i, 'false') ? i + 5 : -1;
  if (c === 0x6e) return isLiteral(text, i, 'null') ? i + 4 : -1;
  return readNumber(text, i, t);
}
