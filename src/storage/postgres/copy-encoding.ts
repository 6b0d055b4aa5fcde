import type { TelemetryEvent } from '../../events/types';
import { encodeAttributes, storableText } from './row-mapping';

/**
 * A batch as `COPY … FROM STDIN` text, one payload per table, rows in batch order; the same
 * columns and values as `toRows` (row-mapping.ts), written straight to text with no row objects
 * in between, because this runs on the event loop for every stored event.
 */
export interface CopyPayloads {
  /** Rows of `metric_samples`, columns in `METRIC_SAMPLES` order. */
  readonly metrics: string;
  readonly metricRows: number;
  /** Rows of `events`, columns in `EVENTS` order. */
  readonly events: string;
  readonly eventRows: number;
}

/** What COPY text must escape, and what PostgreSQL cannot store (U+0000, lone surrogates). */
// eslint-disable-next-line no-control-regex -- U+0000 is exactly what must be matched
const NEEDS_WORK = /[\\\n\r\t\u0000\uD800-\uDFFF]/;
const COPY_SPECIAL = /[\\\n\r\t]/g;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
/** In `JSON.stringify` output: the escapes jsonb refuses (`\u0000`, a lone surrogate). */
const JSON_UNSTORABLE_ESCAPE = /\\u(?:0000|d[89a-f])/;

/** One text field: storable, with COPY's four special characters escaped. */
function text(s: string): string {
  if (!NEEDS_WORK.test(s)) return s;
  return storableText(s).replace(COPY_SPECIAL, (c) => COPY_ESCAPES[c] as string);
}

function optionalText(s: string | null): string {
  return s === null ? '\\N' : text(s);
}

function optionalNumber(n: number | null | undefined): string {
  return n === null || n === undefined ? '\\N' : String(n);
}

/**
 * Canonical attributes JSON (keys sorted by code unit), as `encodeAttributes` makes it. Validation
 * admits keys in sorted order, so `JSON.stringify` of the object usually is that text already;
 * integer-like keys (which objects order numerically) and unstorable text take the slow path.
 */
function attributesJson(attributes: TelemetryEvent['attributes']): string {
  const keys = Object.keys(attributes);
  if (keys.length === 0) return '{}';
  for (let i = 1; i < keys.length; i++) {
    if (!((keys[i - 1] as string) < (keys[i] as string))) return encodeAttributes(attributes);
  }
  const json = JSON.stringify(attributes);
  return JSON_UNSTORABLE_ESCAPE.test(json) ? encodeAttributes(attributes) : json;
}

function metricLine(e: TelemetryEvent): string {
  const s = e.summary;
  return (
    `${e.id}\t${e.ts}\t${text(e.app)}\t${text(e.name)}\t${optionalText(e.version)}\t${optionalText(e.env)}\t` +
    `${s === null ? optionalNumber(e.value) : '\\N'}\t${optionalNumber(s?.count)}\t${optionalNumber(s?.min)}\t` +
    `${optionalNumber(s?.max)}\t${optionalNumber(s?.sum)}\t${optionalText(e.message)}\t` +
    `${text(attributesJson(e.attributes))}\n`
  );
}

function eventLine(e: TelemetryEvent): string {
  const err = e.error;
  return (
    `${e.id}\t${e.ts}\t${e.type}\t${text(e.app)}\t${text(e.name)}\t${optionalText(e.version)}\t` +
    `${optionalText(e.env)}\t${optionalText(e.message)}\t${err === null ? '\\N' : text(err.message)}\t` +
    `${optionalText(err?.kind ?? null)}\t${optionalText(err?.stack ?? null)}\t` +
    `${text(attributesJson(e.attributes))}\n`
  );
}

/** Splits a batch by table and renders each as COPY text. */
export function encodeCopyPayloads(events: readonly TelemetryEvent[]): CopyPayloads {
  let metrics = '';
  let others = '';
  let metricRows = 0;
  for (const e of events) {
    if (e.type === 'metric') {
      metrics += metricLine(e);
      metricRows++;
    } else {
      others += eventLine(e);
    }
  }
  return { metrics, metricRows, events: others, eventRows: events.length - metricRows };
}
