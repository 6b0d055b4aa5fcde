import type { TelemetryEvent } from '../../events/types';
import { encodeAttributes, storableText } from '../layout/rows';
import { SlabWriter } from '../../events/scan/slab-writer';
import { LineTimestamp } from './copy-line-ts';
import {
  float8Field,
  int8Field,
  nullField,
  SAMPLE_FIXED_BYTES,
  stringField,
  uuidStringField,
} from './sample-fields';

/**
 * One event as its row for its table, with no row objects in between: a metric sample as its
 * `metric_samples` columns in binary COPY fields (sample-fields.ts), which the writer copies into
 * blocks as they are; any other event as its line of `COPY … FROM STDIN` text for `events`, the same
 * columns and values as `toRows` (layout/rows.ts). Either is bytes, so a queued event costs the heap
 * two small objects, not its whole object graph.
 */
export class CopyLine {
  constructor(
    /** A metric sample's fields (true) or a line of `events`. */
    readonly metric: boolean,
    readonly bytes: Buffer,
  ) {}
}

/** A batch split by table. */
export interface CopyPayloads {
  /** Metric samples' fields (sample-fields.ts), in batch order (metric-blocks-copy.ts). */
  readonly metricSamples: readonly Buffer[];
  /** Each metric sample's loss-map origin (`''` where the writer was not told). */
  readonly metricOrigins: readonly string[];
  /** Lines of `events`, columns in `EVENTS` order, as one payload in the order of their ts. */
  readonly events: Buffer;
}

/** Samples' fields are cut from shared slabs: one allocation per many samples (slab-writer.ts). */
const sampleSlab = new SlabWriter(128 * 1024);

/** What COPY text must escape, and what PostgreSQL cannot store (U+0000, lone surrogates). */
// eslint-disable-next-line no-control-regex -- U+0000 is exactly what must be matched
const NEEDS_WORK = /[\\\n\r\t\u0000\uD800-\uDFFF]/;
const COPY_SPECIAL = /[\\\n\r\t]/g;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
/** In `JSON.stringify` output: the escapes jsonb refuses (`\u0000`, a lone surrogate). */
const JSON_UNSTORABLE_ESCAPE = /\\u(?:0000|d[89a-f])/;

/**
 * Whether `s` has no control character, backslash or surrogate: then it needs no work. A loop over
 * code units beats a regular expression call on the short strings most fields hold; anything it
 * flags goes to the exact test.
 */
function isPlain(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return false;
  }
  return true;
}

/** One text field: storable, with COPY's four special characters escaped. */
function text(s: string): string {
  if (isPlain(s)) return s;
  if (!NEEDS_WORK.test(s)) return s;
  return storableText(s).replace(COPY_SPECIAL, (c) => COPY_ESCAPES[c] as string);
}

function optionalText(s: string | null): string {
  return s === null ? '\\N' : text(s);
}

/**
 * Canonical attributes JSON (keys sorted by code unit), storable, as `encodeAttributes` makes it.
 * Validation admits keys in sorted order, so `JSON.stringify` of the object usually is that text
 * already; integer-like keys (which objects order numerically) and unstorable text take the slow
 * path. `JSON.stringify` escapes every control character and lone surrogate, so its only
 * unstorable output is those escapes.
 */
function attributesJson(attributes: TelemetryEvent['attributes']): string {
  // for-in walks the object's enumeration cache: unlike Object.keys it allocates no array per event.
  let previous: string | null = null;
  for (const key in attributes) {
    if (previous !== null && !(previous < key)) return encodeAttributes(attributes);
    previous = key;
  }
  if (previous === null) return '{}';
  const json = JSON.stringify(attributes);
  if (!json.includes('\\')) return json;
  return JSON_UNSTORABLE_ESCAPE.test(json) ? encodeAttributes(attributes) : json;
}

/** The attributes' JSON escaped for COPY: JSON text without a backslash needs no escaping. */
function attributesField(attributes: TelemetryEvent['attributes']): string {
  const json = attributesJson(attributes);
  return json.includes('\\') ? text(json) : json;
}

function optionalStringField(w: SlabWriter, s: string | null): void {
  if (s === null) nullField(w);
  else stringField(w, storableText(s));
}

function optionalFloat8Field(w: SlabWriter, n: number | null): void {
  if (n === null) nullField(w);
  else float8Field(w, n);
}

/** `e`'s sample as its binary COPY fields (sample-fields.ts). */
function metricFields(e: TelemetryEvent): Buffer {
  const attributes = attributesJson(e.attributes);
  // UTF-8 takes at most 3 bytes per UTF-16 code unit.
  const textUnits =
    e.app.length +
    e.name.length +
    (e.version?.length ?? 0) +
    (e.env?.length ?? 0) +
    (e.message?.length ?? 0) +
    attributes.length;
  const w = sampleSlab;
  w.begin(SAMPLE_FIXED_BYTES + 3 * textUnits);
  uuidStringField(w, e.id);
  int8Field(w, e.ts);
  stringField(w, storableText(e.app));
  stringField(w, storableText(e.name));
  optionalStringField(w, e.version);
  optionalStringField(w, e.env);
  const s = e.summary;
  optionalFloat8Field(w, s === null ? e.value : null);
  if (s === null) nullField(w);
  else int8Field(w, s.count);
  optionalFloat8Field(w, s?.min ?? null);
  optionalFloat8Field(w, s?.max ?? null);
  optionalFloat8Field(w, s?.sum ?? null);
  optionalStringField(w, e.message);
  stringField(w, attributes);
  return w.end();
}

function eventLine(e: TelemetryEvent): string {
  const err = e.error;
  const errorFields =
    err === null
      ? '\\N\t\\N\t\\N'
      : `${text(err.message)}\t${optionalText(err.kind)}\t${optionalText(err.stack)}`;
  return (
    `${e.id}\t${e.ts}\t${e.type}\t${text(e.app)}\t${text(e.name)}\t${optionalText(e.version)}\t` +
    `${optionalText(e.env)}\t${optionalText(e.message)}\t${errorFields}\t` +
    `${attributesField(e.attributes)}\n`
  );
}

/** `e` as its row: a metric sample's binary COPY fields, or an event's line of COPY text. */
export function toCopyLine(e: TelemetryEvent): CopyLine {
  return e.type === 'metric'
    ? new CopyLine(true, metricFields(e))
    : new CopyLine(false, Buffer.from(eventLine(e), 'utf8'));
}

/** `lines` joined in the order of their ts; lines of one ts keep their order. */
function joinedByTs(lines: readonly Buffer[], timestamp: LineTimestamp): Buffer {
  const n = lines.length;
  const ts = new Float64Array(n);
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    ts[i] = timestamp.read(lines[i] as Buffer).ts;
    order[i] = i;
  }
  // TypedArray sort is stable: lines of one ts keep their order.
  order.sort((a, b) => (ts[a] as number) - (ts[b] as number));
  const sorted: Buffer[] = [];
  for (let i = 0; i < n; i++) sorted.push(lines[order[i] as number] as Buffer);
  return Buffer.concat(sorted);
}

/**
 * Splits rows by table; the events' are joined into one payload in the order of their ts. The
 * key is `(ts, id)` and the other indexes end in ts, so rows in ts order insert into neighbouring
 * index pages one after another, and the database spends less CPU per row (docs/performance.md,
 * "Rows in ts order"); metric-blocks-copy.ts orders the samples' keys the same way. The order of
 * rows within a COPY changes nothing else.
 */
export function copyPayloads(lines: readonly CopyLine[], origins?: readonly string[]): CopyPayloads {
  const metricSamples: Buffer[] = [];
  const metricOrigins: string[] = [];
  const events: Buffer[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as CopyLine;
    if (!line.metric) {
      events.push(line.bytes);
      continue;
    }
    metricSamples.push(line.bytes);
    metricOrigins.push(origins?.[i] ?? '');
  }
  return { metricSamples, metricOrigins, events: joinedByTs(events, new LineTimestamp()) };
}
