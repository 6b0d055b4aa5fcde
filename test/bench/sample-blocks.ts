import type { TelemetryEvent } from '../../src/events/types';
import { encodeAttributes } from '../../src/storage/layout/rows';
import * as bin from './binary-copy';
import { binaryCopy } from './binary-copy';

/**
 * Metric samples grouped into blocks (one row per (app, name, UTC minute) of a group of samples)
 * and the COPY payloads the storage-cost suite writes them with: a block's samples as one array of
 * a composite type (text COPY) or as one array per column (binary COPY), and each sample's key
 * `(ts, id)` as a row of its own (binary COPY).
 */

/** One block: the samples of a group with the same (app, name, minute). */
export interface Block {
  readonly bucket: number;
  readonly first: TelemetryEvent;
  readonly tsMin: number;
  readonly tsMax: number;
  readonly samples: readonly TelemetryEvent[];
}

/** The samples in groups of `groupSize` (in arrival order), each group's per (app, name, minute). */
function blocksOf(samples: readonly TelemetryEvent[], groupSize: number): Block[] {
  const out: Block[] = [];
  for (let g = 0; g < samples.length; g += groupSize) {
    const groups = new Map<string, TelemetryEvent[]>();
    for (const e of samples.slice(g, g + groupSize)) {
      const key = `${e.app}\u0000${e.name}\u0000${e.ts - (e.ts % 60_000)}`;
      const list = groups.get(key);
      if (list) list.push(e);
      else groups.set(key, [e]);
    }
    for (const list of groups.values()) {
      const first = list[0] as TelemetryEvent;
      let tsMin = first.ts;
      let tsMax = first.ts;
      for (const e of list) {
        if (e.ts < tsMin) tsMin = e.ts;
        if (e.ts > tsMax) tsMax = e.ts;
      }
      out.push({ bucket: first.ts - (first.ts % 60_000), first, tsMin, tsMax, samples: list });
    }
  }
  return out;
}

/** One field of a composite literal: empty for NULL, quoted (quotes and backslashes doubled) when needed. */
function compositeField(s: string | number | null): string {
  if (s === null) return '';
  const text = String(s);
  if (text !== '' && !/[(),"\\\s]/.test(text)) return text;
  return `"${text.replace(/["\\]/g, (c) => c + c)}"`;
}

/** A sample as an element of a `sample[]` literal. */
function sampleElement(e: TelemetryEvent): string {
  const s = e.summary;
  const composite = `(${[
    e.id,
    e.ts,
    e.version,
    e.env,
    e.value,
    s?.count ?? null,
    s?.min ?? null,
    s?.max ?? null,
    s?.sum ?? null,
    e.message,
    encodeAttributes(e.attributes),
  ]
    .map(compositeField)
    .join(',')})`;
  return `"${composite.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

/** COPY text's escapes (backslash, newline, carriage return, tab). */
function copyEscape(s: string): string {
  return s.replace(
    /[\\\n\r\t]/g,
    (c) => ({ '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' })[c] as string,
  );
}

/**
 * Text COPY of blocks as one array of a composite type: the minute, the first sample's id, app,
 * name, the first and last `ts`, and the samples.
 */
export function compositeBlockLines(samples: readonly TelemetryEvent[], groupSize: number): Buffer {
  let out = '';
  for (const b of blocksOf(samples, groupSize)) {
    const array = `{${b.samples.map(sampleElement).join(',')}}`;
    out +=
      `${b.bucket}\t${b.first.id}\t${copyEscape(b.first.app)}\t${copyEscape(b.first.name)}\t` +
      `${b.tsMin}\t${b.tsMax}\t${copyEscape(array)}\n`;
  }
  return Buffer.from(out);
}

/**
 * Binary COPY of blocks: the minute, the first sample's id, app, name, the first and last `ts`,
 * then one array per column of the samples (ids, ts, version, env, value, count, min, max, sum,
 * message, attributes), in the samples' arrival order. With `seriesOf`, the last array holds each
 * sample's series id (bigint) instead of its attributes.
 */
export function columnBlockCopy(
  samples: readonly TelemetryEvent[],
  groupSize: number,
  seriesOf?: (e: TelemetryEvent) => number,
): Buffer {
  const nullable = <T>(v: T | null | undefined, f: (x: T) => Buffer): Buffer | null =>
    v === null || v === undefined ? null : f(v);
  return binaryCopy(
    blocksOf(samples, groupSize).map((b) => {
      const ss = b.samples;
      return [
        bin.int8(b.bucket),
        bin.uuid(b.first.id),
        bin.text(b.first.app),
        bin.text(b.first.name),
        bin.int8(b.tsMin),
        bin.int8(b.tsMax),
        bin.array(
          bin.OID.uuid,
          ss.map((e) => bin.uuid(e.id)),
        ),
        bin.array(
          bin.OID.int8,
          ss.map((e) => bin.int8(e.ts)),
        ),
        bin.array(
          bin.OID.text,
          ss.map((e) => nullable(e.version, bin.text)),
        ),
        bin.array(
          bin.OID.text,
          ss.map((e) => nullable(e.env, bin.text)),
        ),
        bin.array(
          bin.OID.float8,
          ss.map((e) => nullable(e.value, bin.float8)),
        ),
        bin.array(
          bin.OID.int8,
          ss.map((e) => nullable(e.summary?.count, bin.int8)),
        ),
        bin.array(
          bin.OID.float8,
          ss.map((e) => nullable(e.summary?.min, bin.float8)),
        ),
        bin.array(
          bin.OID.float8,
          ss.map((e) => nullable(e.summary?.max, bin.float8)),
        ),
        bin.array(
          bin.OID.float8,
          ss.map((e) => nullable(e.summary?.sum, bin.float8)),
        ),
        bin.array(
          bin.OID.text,
          ss.map((e) => nullable(e.message, bin.text)),
        ),
        seriesOf
          ? bin.array(
              bin.OID.int8,
              ss.map((e) => bin.int8(seriesOf(e))),
            )
          : bin.array(
              bin.OID.text,
              ss.map((e) => bin.text(encodeAttributes(e.attributes))),
            ),
      ];
    }),
  );
}

/** Binary COPY of each sample's key `(ts, id)`, one row a sample, in the samples' order. */
export function sampleKeyCopy(samples: readonly TelemetryEvent[]): Buffer {
  return binaryCopy(samples.map((e) => [bin.int8(e.ts), bin.uuid(e.id)]));
}
