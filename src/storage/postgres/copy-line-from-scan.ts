import { unicodeEscape } from '../../events/scan/json-text';
import {
  ATTR_FALSE,
  ATTR_NUMBER,
  ATTR_NUMBER_TEXT,
  ATTR_STRING,
  ATTR_TRUE,
  type ScannedEvent,
  type TextField,
} from '../../events/scan/scanned-event';
import { SlabWriter } from '../../events/scan/slab-writer';
import { CopyLine } from './copy-encoding';

/*
 * The single pass's row writer for PostgreSQL: an event the scan validated (events/scan/) written
 * from the body's bytes straight to its line of COPY text, byte for byte the line `toCopyLine`
 * writes for the same event typed (test/unit/storage/single-pass-rows.test.ts proves it on
 * generated bodies). Lines are cut from shared slabs: one allocation per many events, and a
 * slab's memory goes when the last line cut from it is committed (lanes release in order).
 */

const SLAB_BYTES = 128 * 1024;
/** Longest text of a double (`String(n)`): `-1.2345678901234567e-308` and the like. */
const NUMBER_ROOM = 25;
/** Room for the separators, `\N`s and the type of a line. */
const LINE_ROOM = 128;

const w = new SlabWriter(SLAB_BYTES);

const TAB = 0x09;
const NEWLINE = 0x0a;
const BACKSLASH = 0x5c;
const QUOTE = 0x22;

function nullField(): void {
  w.byte(BACKSLASH);
  w.byte(0x4e);
}

/** A double as `String(n)` writes it; integers without a string. */
function number(n: number): void {
  if (Number.isInteger(n) && Math.abs(n) < 1e15) {
    if (n < 0) {
      w.byte(0x2d);
      n = -n;
    }
    if (n === 0) {
      w.byte(0x30);
      return;
    }
    let digits = 0;
    for (let m = n; m >= 1; m = Math.floor(m / 10)) digits++;
    w.at += digits;
    for (let k = 1; k <= digits; k++) {
      w.buf[w.at - k] = 0x30 + (n % 10);
      n = Math.floor(n / 10);
    }
    return;
  }
  w.ascii(String(n));
}

function utf8(cp: number): void {
  if (cp < 0x80) w.byte(cp);
  else if (cp < 0x800) {
    w.byte(0xc0 | (cp >> 6));
    w.byte(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    w.byte(0xe0 | (cp >> 12));
    w.byte(0x80 | ((cp >> 6) & 0x3f));
    w.byte(0x80 | (cp & 0x3f));
  } else {
    w.byte(0xf0 | (cp >> 18));
    w.byte(0x80 | ((cp >> 12) & 0x3f));
    w.byte(0x80 | ((cp >> 6) & 0x3f));
    w.byte(0x80 | (cp & 0x3f));
  }
}

/** A character of decoded text as COPY text writes it: `\`, newline, CR and tab escaped. */
function copyChar(cp: number): void {
  if (cp === BACKSLASH) {
    w.byte(BACKSLASH);
    w.byte(BACKSLASH);
  } else if (cp === 0x0a) {
    w.byte(BACKSLASH);
    w.byte(0x6e);
  } else if (cp === 0x0d) {
    w.byte(BACKSLASH);
    w.byte(0x72);
  } else if (cp === TAB) {
    w.byte(BACKSLASH);
    w.byte(0x74);
  } else utf8(cp);
}

/** A JSON string's contents, decoded, as COPY text (the scan checked every escape is text). */
function decoded(text: Uint8Array, start: number, end: number): void {
  let p = start;
  while (p < end) {
    const c = text[p] as number;
    if (c !== BACKSLASH) {
      w.byte(c);
      p++;
      continue;
    }
    const e = text[p + 1] as number;
    if (e === 0x75) {
      let cp = unicodeEscape(text, p + 1);
      p += 6;
      if (cp >= 0xd800 && cp <= 0xdbff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (unicodeEscape(text, p + 1) - 0xdc00);
        p += 6;
      }
      copyChar(cp);
      continue;
    }
    p += 2;
    if (e === 0x6e) copyChar(0x0a);
    else if (e === 0x72) copyChar(0x0d);
    else if (e === 0x74) copyChar(TAB);
    else if (e === 0x62) w.byte(0x08);
    else if (e === 0x66) w.byte(0x0c);
    else copyChar(e); // `"`, `\`, `/`
  }
}

function textField(text: Uint8Array, f: TextField): void {
  if (f.escaped) decoded(text, f.start, f.end);
  else w.raw(text, f.start, f.end);
}

function optionalField(text: Uint8Array, f: TextField): void {
  if (f.start < 0) nullField();
  else textField(text, f);
}

function id(text: Uint8Array, start: number): void {
  for (let p = start; p < start + 36; p++) {
    const c = text[p] as number;
    w.byte(c >= 0x41 && c <= 0x46 ? c | 0x20 : c);
  }
}

/** Canonical attributes JSON (keys in code-unit order): the scan took only keys and strings with no escape. */
function attributes(text: Uint8Array, e: ScannedEvent): void {
  w.byte(0x7b);
  for (let k = 0; k < e.attributeCount; k++) {
    const a = e.order[k] as number;
    if (k > 0) w.byte(0x2c);
    w.byte(QUOTE);
    w.raw(text, e.keyStart[a] as number, e.keyEnd[a] as number);
    w.byte(QUOTE);
    w.byte(0x3a);
    const kind = e.valueKind[a];
    if (kind === ATTR_STRING) {
      w.byte(QUOTE);
      w.raw(text, e.valueStart[a] as number, e.valueEnd[a] as number);
      w.byte(QUOTE);
    } else if (kind === ATTR_NUMBER_TEXT) w.raw(text, e.valueStart[a] as number, e.valueEnd[a] as number);
    else if (kind === ATTR_NUMBER) number(e.valueNumber[a] as number);
    else if (kind === ATTR_TRUE) w.ascii('true');
    else if (kind === ATTR_FALSE) w.ascii('false');
  }
  w.byte(0x7d);
}

/** `e` (in `text`) as its line of COPY text, exactly as `toCopyLine` writes the same event typed. */
export function copyLineFromScan(text: Uint8Array, e: ScannedEvent): CopyLine {
  // Decoded text is never longer than its JSON; numbers and markers get room of their own.
  w.begin(e.spanEnd - e.spanStart + LINE_ROOM + NUMBER_ROOM * (e.attributeCount + 5));
  const metric = e.type === 'metric';
  id(text, e.idStart);
  w.byte(TAB);
  w.raw(text, e.tsStart, e.tsEnd);
  w.byte(TAB);
  if (!metric) {
    w.ascii(e.type);
    w.byte(TAB);
  }
  textField(text, e.app);
  w.byte(TAB);
  textField(text, e.name);
  w.byte(TAB);
  optionalField(text, e.version);
  w.byte(TAB);
  optionalField(text, e.env);
  w.byte(TAB);
  if (metric) {
    if (e.summary) {
      nullField();
      w.byte(TAB);
      number(e.count);
      w.byte(TAB);
      number(e.min);
      w.byte(TAB);
      number(e.max);
      w.byte(TAB);
      number(e.sum);
    } else {
      if (e.valueCanonical) w.raw(text, e.valueTextStart, e.valueTextEnd);
      else number(e.value);
      w.ascii('\t\\N\t\\N\t\\N\t\\N');
    }
    w.byte(TAB);
    optionalField(text, e.message);
  } else {
    optionalField(text, e.message);
    w.byte(TAB);
    if (e.type === 'error') {
      textField(text, e.errorMessage);
      w.byte(TAB);
      optionalField(text, e.errorKind);
      w.byte(TAB);
      optionalField(text, e.errorStack);
    } else w.ascii('\\N\t\\N\t\\N');
  }
  w.byte(TAB);
  attributes(text, e);
  w.byte(NEWLINE);
  return new CopyLine(metric, w.end());
}
