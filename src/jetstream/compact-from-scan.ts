import {
  ATTR_FALSE,
  ATTR_STRING,
  ATTR_TRUE,
  type ScannedEvent,
  type TextField,
} from '../events/scan/scanned-event';
import { SlabWriter } from '../events/scan/slab-writer';

/*
 * The single pass's writer for tier 4: an event the scan validated (events/scan/), written from
 * the body's bytes as its format-2 array (compact-payload.ts), the element of a message, with no
 * typed event and no JSON.stringify in between. Strings and numbers are copied as the body wrote
 * them (valid JSON of the same value); the worker's decoding gives the event `compactEvent` would
 * have carried (test/unit/jetstream/compact-from-scan.test.ts). Elements are cut from shared slabs.
 */

const SLAB_BYTES = 128 * 1024;
/** Room for a summary's five numbers, the nulls and the brackets. */
const ELEMENT_ROOM = 256;

const w = new SlabWriter(SLAB_BYTES);

/** A JSON string as the body wrote it, quotes and escapes included. */
function string(text: Uint8Array, f: TextField): void {
  w.raw(text, f.start - 1, f.end + 1);
}

function optional(text: Uint8Array, f: TextField): void {
  if (f.start < 0) w.ascii('null');
  else string(text, f);
}

/** `e` (in `text`) as its format-2 array, JSON in UTF-8. */
export function compactFromScan(text: Uint8Array, e: ScannedEvent): Uint8Array {
  w.begin(e.spanEnd - e.spanStart + ELEMENT_ROOM);
  w.byte(0x5b);
  w.byte(0x22);
  for (let p = e.idStart; p < e.idStart + 36; p++) {
    const c = text[p] as number;
    w.byte(c >= 0x41 && c <= 0x46 ? c | 0x20 : c);
  }
  w.ascii(`","${e.type}",`);
  string(text, e.name);
  w.byte(0x2c);
  w.raw(text, e.tsStart, e.tsEnd);
  w.byte(0x2c);
  string(text, e.app);
  w.byte(0x2c);
  optional(text, e.version);
  w.byte(0x2c);
  optional(text, e.env);
  w.byte(0x2c);
  if (e.type === 'metric' && !e.summary) w.raw(text, e.valueTextStart, e.valueTextEnd);
  else w.ascii('null');
  w.byte(0x2c);
  if (e.type === 'metric' && e.summary) {
    w.ascii(`[${e.count},${e.min},${e.max},${e.sum},${e.sum / e.count}]`);
  } else w.ascii('null');
  w.byte(0x2c);
  if (e.type === 'error') {
    w.byte(0x5b);
    string(text, e.errorMessage);
    w.byte(0x2c);
    optional(text, e.errorKind);
    w.byte(0x2c);
    optional(text, e.errorStack);
    w.byte(0x5d);
  } else w.ascii('null');
  w.byte(0x2c);
  optional(text, e.message);
  w.byte(0x2c);
  w.byte(0x5b);
  for (let k = 0; k < e.attributeCount; k++) {
    const a = e.order[k] as number;
    if (k > 0) w.byte(0x2c);
    w.raw(text, (e.keyStart[a] as number) - 1, (e.keyEnd[a] as number) + 1);
    w.byte(0x2c);
    const kind = e.valueKind[a];
    if (kind === ATTR_STRING) w.raw(text, (e.valueStart[a] as number) - 1, (e.valueEnd[a] as number) + 1);
    else if (kind === ATTR_TRUE) w.ascii('true');
    else if (kind === ATTR_FALSE) w.ascii('false');
    else w.raw(text, e.valueStart[a] as number, e.valueEnd[a] as number);
  }
  w.byte(0x5d);
  w.byte(0x5d);
  return w.end();
}
