import {
  ATTR_FALSE,
  ATTR_NUMBER,
  ATTR_NUMBER_TEXT,
  ATTR_STRING,
  ATTR_TRUE,
  type ScannedEvent,
  type TextField,
} from '../../events/scan/scanned-event';
import { storableText, type EventRow, type MetricSampleRow } from '../layout/rows';

/*
 * The single pass's row writer for SQLite: an event the scan validated (events/scan/) becomes the
 * values its statement binds, read from the body's bytes with no `JSON.parse` and no typed event —
 * the row `toMetricSampleRow` / `toEventRow` make of the same event typed, value for value
 * (test/unit/storage/single-pass-rows.test.ts proves it on generated bodies).
 */

/** The body as a Buffer (it is one already when it comes from an HTTP request). */
function viewOf(body: Uint8Array): Buffer {
  return Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/** A text field's string: its UTF-8 bytes, or its JSON string decoded when it holds escapes. */
function text(view: Buffer, f: TextField): string {
  if (!f.escaped) return view.toString('utf8', f.start, f.end);
  return storableText(JSON.parse(view.toString('utf8', f.start - 1, f.end + 1)) as string);
}

function optionalText(view: Buffer, f: TextField): string | null {
  return f.start < 0 ? null : text(view, f);
}

/** The event's id, lower-case (as validation normalises it). */
function id(view: Buffer, start: number): string {
  const s = view.toString('latin1', start, start + 36);
  for (let k = start; k < start + 36; k++) {
    const c = view[k] as number;
    if (c >= 0x41 && c <= 0x46) return s.toLowerCase();
  }
  return s;
}

/**
 * Canonical attributes JSON, as `encodeAttributes` writes it: keys in code-unit order, each key and
 * string value as JSON (the scan took only keys and strings with no escape and no character JSON
 * would escape, so their bytes are their JSON), numbers as JavaScript writes them.
 */
function attributes(view: Buffer, e: ScannedEvent): string {
  if (e.attributeCount === 0) return '{}';
  let json = '{';
  for (let k = 0; k < e.attributeCount; k++) {
    const a = e.order[k] as number;
    if (k > 0) json += ',';
    json += `"${view.toString('utf8', e.keyStart[a] as number, e.keyEnd[a] as number)}":`;
    const kind = e.valueKind[a];
    if (kind === ATTR_STRING)
      json += `"${view.toString('utf8', e.valueStart[a] as number, e.valueEnd[a] as number)}"`;
    else if (kind === ATTR_NUMBER_TEXT)
      json += view.toString('latin1', e.valueStart[a] as number, e.valueEnd[a] as number);
    else if (kind === ATTR_NUMBER) json += String(e.valueNumber[a]);
    else if (kind === ATTR_TRUE) json += 'true';
    else if (kind === ATTR_FALSE) json += 'false';
  }
  return `${json}}`;
}

/** `e` (in `body`) as the row SQLite binds, exactly the row the typed path makes of it. */
export function sqliteRowFromScan(body: Uint8Array, e: ScannedEvent): MetricSampleRow | EventRow {
  const view = viewOf(body);
  if (e.type === 'metric') {
    const summary = e.summary;
    return {
      id: id(view, e.idStart),
      ts: e.ts,
      app: text(view, e.app),
      name: text(view, e.name),
      version: optionalText(view, e.version),
      env: optionalText(view, e.env),
      value: summary ? null : e.value,
      count: summary ? e.count : null,
      min: summary ? e.min : null,
      max: summary ? e.max : null,
      sum: summary ? e.sum : null,
      message: optionalText(view, e.message),
      attributes: attributes(view, e),
    };
  }
  const error = e.type === 'error';
  return {
    id: id(view, e.idStart),
    ts: e.ts,
    type: e.type,
    app: text(view, e.app),
    name: text(view, e.name),
    version: optionalText(view, e.version),
    env: optionalText(view, e.env),
    message: optionalText(view, e.message),
    error_message: error ? text(view, e.errorMessage) : null,
    error_kind: error ? optionalText(view, e.errorKind) : null,
    error_stack: error ? optionalText(view, e.errorStack) : null,
    attributes: attributes(view, e),
  };
}
