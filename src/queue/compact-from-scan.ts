import {
  ATTR_FALSE,
  ATTR_STRING,
  ATTR_TRUE,
  type ScannedEvent,
  type TextField,
} from '../events/scan/scanned-event';

/*
 * The single pass's writer for tier 4: an event the scan validated (events/scan/), written from
 * the body's bytes as its format-2 array (compact-payload.ts), the element of a message, with no
 * typed event and no JSON.stringify in between. Strings and numbers are copied as the body wrote
 * them (valid JSON of the same value); the worker's decoding gives the event `compactEvent` would
 * have carried (test/unit/queue/compact-from-scan.test.ts). Elements are cut from shared slabs.
 */

const SLAB_BYTES = 128 * 1024;
/** Room for a summary's five numbers, the nulls and the brackets. */
const ELEMENT_ROOM = 256;

let slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
let used = 0;
let at = 0;

function ascii(s: string): void {
  for (let k = 0; k < s.length; k++) slab[at++] = s.charCodeAt(k);
}

function raw(text: Uint8Array, start: number, end: number): void {
  if (end - start > 64) {
    slab.set(text.subarray(start, end), at);
    at += end - start;
    return;
  }
  for (let p = start; p < end; p++) slab[at++] = text[p] as number;
}

/** A JSON string as the body wrote it, quotes and escapes included. */
function string(text: Uint8Array, f: TextField): void {
  raw(text, f.start - 1, f.end + 1);
}

function optional(text: Uint8Array, f: TextField): void {
  if (f.start < 0) ascii('null');
  else string(text, f);
}

function reserve(bytes: number): void {
  if (used + bytes <= slab.length) return;
  slab = Buffer.allocUnsafeSlow(Math.max(SLAB_BYTES, bytes));
  used = 0;
}

/** `e` (in `text`) as its format-2 array, JSON in UTF-8. */
export function compactFromScan(text: Uint8Array, e: ScannedEvent): Uint8Array {
  reserve(e.spanEnd - e.spanStart + ELEMENT_ROOM);
  at = used;
  const start = at;
  slab[at++] = 0x5b;
  slab[at++] = 0x22;
  for (let p = e.idStart; p < e.idStart + 36; p++) {
    const c = text[p] as number;
    slab[at++] = c >= 0x41 && c <= 0x46 ? c | 0x20 : c;
  }
  ascii(`","${e.type}",`);
  string(text, e.name);
  slab[at++] = 0x2c;
  raw(text, e.tsStart, e.tsEnd);
  slab[at++] = 0x2c;
  string(text, e.app);
  slab[at++] = 0x2c;
  optional(text, e.version);
  slab[at++] = 0x2c;
  optional(text, e.env);
  slab[at++] = 0x2c;
  if (e.type === 'metric' && !e.summary) raw(text, e.valueTextStart, e.valueTextEnd);
  else ascii('null');
  slab[at++] = 0x2c;
  if (e.type === 'metric' && e.summary) {
    ascii(`[${e.count},${e.min},${e.max},${e.sum},${e.sum / e.count}]`);
  } else ascii('null');
  slab[at++] = 0x2c;
  if (e.type === 'error') {
    slab[at++] = 0x5b;
    string(text, e.errorMessage);
    slab[at++] = 0x2c;
    optional(text, e.errorKind);
    slab[at++] = 0x2c;
    optional(text, e.errorStack);
    slab[at++] = 0x5d;
  } else ascii('null');
  slab[at++] = 0x2c;
  optional(text, e.message);
  slab[at++] = 0x2c;
  slab[at++] = 0x5b;
  for (let k = 0; k < e.attributeCount; k++) {
    const a = e.order[k] as number;
    if (k > 0) slab[at++] = 0x2c;
    raw(text, (e.keyStart[a] as number) - 1, (e.keyEnd[a] as number) + 1);
    slab[at++] = 0x2c;
    const kind = e.valueKind[a];
    if (kind === ATTR_STRING) raw(text, (e.valueStart[a] as number) - 1, (e.valueEnd[a] as number) + 1);
    else if (kind === ATTR_TRUE) ascii('true');
    else if (kind === ATTR_FALSE) ascii('false');
    else raw(text, e.valueStart[a] as number, e.valueEnd[a] as number);
  }
  slab[at++] = 0x5d;
  slab[at++] = 0x5d;
  used = at;
  return slab.subarray(start, at);
}
