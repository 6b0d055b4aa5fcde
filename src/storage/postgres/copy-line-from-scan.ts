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
import {
  endTextField,
  float8Field,
  int8Field,
  nullField,
  SAMPLE_FIXED_BYTES,
  startTextField,
  uuidField,
} from './sample-fields';

/*
 * The single pass's row writer for PostgreSQL: an event the scan validated (events/scan/) written
 * from the body's bytes straight to its row (a metric sample's binary COPY fields, any other
 * event's line of COPY text), byte for byte the row `toCopyLine` writes for the same event typed (test/unit/storage/single-pass-rows.test.ts proves it on
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

function nullText(): void {
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

/**
 * A JSON string's contents, decoded (the scan checked every escape is text), each character
 * written by `char`: `copyChar` for COPY text, `utf8` for a binary field.
 */
function decoded(text: Uint8Array, start: number, end: number, char: (cp: number) => void): void {
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
      char(cp);
      continue;
    }
    p += 2;
    if (e === 0x6e) char(0x0a);
    else if (e === 0x72) char(0x0d);
    else if (e === 0x74) char(TAB);
    else if (e === 0x62) w.byte(0x08);
    else if (e === 0x66) w.byte(0x0c);
    else char(e); // `"`, `\`, `/`
  }
}

function textField(text: Uint8Array, f: TextField): void {
  if (f.escaped) decoded(text, f.start, f.end, copyChar);
  else w.raw(text, f.start, f.end);
}

/** A text field of a sample (sample-fields.ts): its decoded UTF-8 bytes. */
function sampleTextField(text: Uint8Array, f: TextField): void {
  const lengthAt = startTextField(w);
  if (f.escaped) decoded(text, f.start, f.end, utf8);
  else w.raw(text, f.start, f.end);
  endTextField(w, lengthAt);
}

function optionalSampleTextField(text: Uint8Array, f: TextField): void {
  if (f.start < 0) nullField(w);
  else sampleTextField(text, f);
}

function optionalField(text: Uint8Array, f: TextField): void {
  if (f.start < 0) nullText();
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

/** `e` (a metric sample, in `text`) as its binary COPY fields, exactly as `toCopyLine` writes it typed. */
function sampleFieldsFromScan(text: Uint8Array, e: ScannedEvent): CopyLine {
  // Decoded text is never longer than its JSON; the attributes' numbers get room of their own.
  w.begin(e.spanEnd - e.spanStart + SAMPLE_FIXED_BYTES + NUMBER_ROOM * e.attributeCount);
  uuidField(w, text, e.idStart);
  int8Field(w, e.ts);
  sampleTextField(text, e.app);
  sampleTextField(text, e.name);
  optionalSampleTextField(text, e.version);
  optionalSampleTextField(text, e.env);
  if (e.summary) {
    nullField(w);
    int8Field(w, e.count);
    float8Field(w, e.min);
    float8Field(w, e.max);
    float8Field(w, e.sum);
  } else {
    float8Field(w, e.value);
    for (let k = 0; k < 4; k++) nullField(w);
  }
  optionalSampleTextField(text, e.message);
  const lengthAt = startTextField(w);
  attributes(text, e);
  endTextField(w, lengthAt);
  return new CopyLine(true, w.end());
}

/** `e` (in `text`) as its row, exactly as `toCopyLine` writes the same event typed. */
export function copyLineFromScan(text: Uint8Array, e: ScannedEvent): CopyLine {
  if (e.type === 'metric') return sampleFieldsFromScan(text, e);
  // Decoded text is never longer than its JSON; numbers and markers get room of their own.
  w.begin(e.spanEnd - e.spanStart + LINE_ROOM + NUMBER_ROOM * e.attributeCount);
  id(text, e.idStart);
  w.byte(TAB);
  w.raw(text, e.tsStart, e.tsEnd);
  w.byte(TAB);
  w.ascii(e.type);
  w.byte(TAB);
  textField(text, e.app);
  w.byte(TAB);
  textField(text, e.name);
  w.byte(TAB);
  optionalField(text, e.version);
  w.byte(TAB);
  optionalField(text, e.env);
  w.byte(TAB);
  optionalField(text, e.message);
  w.byte(TAB);
  if (e.type === 'error') {
    textField(text, e.errorMessage);
    w.byte(TAB);
    optionalField(text, e.errorKind);
    w.byte(TAB);
    optionalField(text, e.errorStack);
  } else w.ascii('\\N\t\\N\t\\N');
  w.byte(TAB);
  attributes(text, e);
  w.byte(NEWLINE);
  return new CopyLine(false, w.end());
}
