import type { TelemetryEvent } from '../../events/types';
import { encodeAttributes, storableText } from '../layout/rows';
import { LineTimestamp } from './copy-line-ts';

/**
 * One event as a line of `COPY … FROM STDIN` text for its table: the same columns and values as
 * `toRows` (layout/rows.ts), written straight to text with no row objects in between. The line is
 * UTF-8 bytes, so a queued event costs the heap two small objects, not its whole object graph.
 */
export class CopyLine {
  constructor(
    /** `metric_samples` (true) or `events`. */
    readonly metric: boolean,
    readonly bytes: Buffer,
  ) {}
}

/** A batch split by table. */
export interface CopyPayloads {
  /** Lines of metric samples, columns in `METRIC_SAMPLES` order, in batch order (metric-blocks-copy.ts). */
  readonly metricLines: readonly Buffer[];
  /** Lines of `events`, columns in `EVENTS` order, as one payload in the order of their ts. */
  readonly events: Buffer;
}

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
 * Canonical attributes JSON (keys sorted by code unit), as `encodeAttributes` makes it, escaped for
 * COPY. Validation admits keys in sorted order, so `JSON.stringify` of the object usually is that
 * text already; integer-like keys (which objects order numerically) and unstorable text take the
 * slow path. `JSON.stringify` escapes every control character and lone surrogate, so JSON text
 * without a backslash needs neither a storability check nor COPY escaping.
 */
function attributesField(attributes: TelemetryEvent['attributes']): string {
  // for-in walks the object's enumeration cache: unlike Object.keys it allocates no array per event.
  let previous: string | null = null;
  for (const key in attributes) {
    if (previous !== null && !(previous < key)) return text(encodeAttributes(attributes));
    previous = key;
  }
  if (previous === null) return '{}';
  const json = JSON.stringify(attributes);
  if (!json.includes('\\')) return json;
  return text(JSON_UNSTORABLE_ESCAPE.test(json) ? encodeAttributes(attributes) : json);
}

function metricLine(e: TelemetryEvent): string {
  const s = e.summary;
  const numbers =
    s === null
      ? `${e.value === null ? '\\N' : e.value}\t\\N\t\\N\t\\N\t\\N`
      : `\\N\t${s.count}\t${s.min}\t${s.max}\t${s.sum}`;
  return (
    `${e.id}\t${e.ts}\t${text(e.app)}\t${text(e.name)}\t${optionalText(e.version)}\t${optionalText(e.env)}\t` +
    `${numbers}\t${optionalText(e.message)}\t${attributesField(e.attributes)}\n`
  );
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

/** `e` as a line of COPY text for its table. */
export function toCopyLine(e: TelemetryEvent): CopyLine {
  return e.type === 'metric'
    ? new CopyLine(true, Buffer.from(metricLine(e), 'utf8'))
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
 * Splits lines by table; the events' are joined into one payload in the order of their ts. The
 * key is `(ts, id)` and the other indexes end in ts, so rows in ts order insert into neighbouring
 * index pages one after another, and the database spends less CPU per row (docs/performance.md,
 * "Rows in ts order"); metric-blocks-copy.ts orders the samples' keys the same way. The order of
 * rows within a COPY changes nothing else.
 */
export function copyPayloads(lines: readonly CopyLine[]): CopyPayloads {
  const metricLines: Buffer[] = [];
  const events: Buffer[] = [];
  for (const line of lines) (line.metric ? metricLines : events).push(line.bytes);
  return { metricLines, events: joinedByTs(events, new LineTimestamp()) };
}
