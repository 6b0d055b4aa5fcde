import { latin1Text } from '../../events/scan/byte-range';
import { BinaryCopyWriter, ELEMENT_OID } from './binary-copy-writer';
import { LineTimestamp } from './copy-line-ts';
import { BLOCK_COLUMNS } from './metric-block-columns';

/*
 * A batch's metric samples as binary COPY payloads of `metric_sample_keys` and `metric_blocks`
 * (migration 009): one block per (app, name, UTC minute) of the batch, its samples' columns as
 * arrays in the samples' ts order, and every sample's `(ts, id)` as a key row, keys in ts order.
 * Read off the samples' own COPY text lines (`METRIC_SAMPLES` column order; copy-encoding.ts and
 * copy-line-from-scan.ts write them), field by field, with no object per sample: text is
 * unescaped to its bytes, numbers are parsed as PostgreSQL's input functions would parse them
 * (the lines hold JSON numbers, which both read as the same double).
 */

const TAB = 0x09;
const NEWLINE = 0x0a;
const BACKSLASH = 0x5c;
const MINUTE_MS = 60_000;
/**
 * Fields of a sample's line: id, ts, app, name, version, env, value, count, min, max, sum, message,
 * attributes.
 */
const FIELDS = 13;
const F = {
  id: 0,
  app: 2,
  name: 3,
  version: 4,
  env: 5,
  value: 6,
  count: 7,
  min: 8,
  max: 9,
  sum: 10,
  message: 11,
  attributes: 12,
} as const;

/** `COPY` of what `metricBlocksCopy` makes: keys first, then the blocks, in one transaction. */
export const METRIC_KEYS_COPY = 'COPY metric_sample_keys (ts, id) FROM STDIN (FORMAT binary)';
export const METRIC_BLOCKS_COPY = `COPY metric_blocks (${BLOCK_COLUMNS}) FROM STDIN (FORMAT binary)`;

export interface MetricBlocksPayloads {
  readonly keys: Buffer;
  readonly blocks: Buffer;
}

/**
 * The lines' field boundaries: field f of line i is its bytes from `bounds[i * 14 + f]` up to,
 * not including, `bounds[i * 14 + f + 1] - 1` (the tab or newline after the field).
 */
function fieldBounds(lines: readonly Buffer[]): Int32Array {
  const bounds = new Int32Array(lines.length * (FIELDS + 1));
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as Buffer;
    const at = i * (FIELDS + 1);
    bounds[at] = 0;
    let f = 1;
    for (let k = 0; k < line.length; k++) {
      const c = line[k];
      if (c === TAB || c === NEWLINE) {
        if (f > FIELDS) throw new Error('a metric COPY line of more fields than metric_samples has');
        bounds[at + f++] = k + 1;
      }
    }
    if (f !== FIELDS + 1) throw new Error('a metric COPY line of fewer fields than metric_samples has');
  }
  return bounds;
}

/** Each byte's value as a hex digit, -1 for any other byte. */
const HEX = new Int8Array(256).fill(-1);
for (let d = 0; d < 16; d++) {
  HEX[d.toString(16).charCodeAt(0)] = d;
  HEX[d.toString(16).toUpperCase().charCodeAt(0)] = d;
}

function hexDigit(c: number): number {
  const d = HEX[c] as number;
  if (d < 0) throw new Error('a metric COPY line whose id is not a UUID');
  return d;
}

/** Offsets of a UUID's 16 bytes' hex digit pairs in its 36-character text form. */
const UUID_PAIRS = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

function isUuidText(line: Buffer, start: number, end: number): boolean {
  return (
    end - start === 36 &&
    line[start + 8] === 0x2d &&
    line[start + 13] === 0x2d &&
    line[start + 18] === 0x2d &&
    line[start + 23] === 0x2d
  );
}

/** The UUID of `line[start, end)` as its 16 bytes, into `ids` at `at`. */
function decodeUuid(line: Buffer, start: number, end: number, ids: Uint8Array, at: number): void {
  if (!isUuidText(line, start, end)) throw new Error('a metric COPY line whose id is not a UUID');
  for (let b = 0; b < 16; b++) {
    const k = start + (UUID_PAIRS[b] as number);
    ids[at + b] = (hexDigit(line[k] as number) << 4) | hexDigit(line[k + 1] as number);
  }
}

/** Sample `i`'s id, decoded by `decodeUuid` into `ids`. */
function writeUuid(w: BinaryCopyWriter, ids: Uint8Array, i: number): void {
  const offset = w.reserve(16);
  const target = w.target;
  for (let b = 0; b < 16; b++) target[offset + b] = ids[i * 16 + b] as number;
}

function isNull(line: Buffer, start: number, end: number): boolean {
  return end - start === 2 && line[start] === BACKSLASH && line[start + 1] === 0x4e;
}

/** COPY text's backslash sequences (PostgreSQL's CopyReadAttributesText), as bytes. */
const ESCAPED: Readonly<Record<number, number>> = {
  0x62: 0x08, // \b
  0x66: 0x0c, // \f
  0x6e: 0x0a, // \n
  0x72: 0x0d, // \r
  0x74: 0x09, // \t
  0x76: 0x0b, // \v
};

function isOctal(c: number | undefined): c is number {
  return c !== undefined && c >= 0x30 && c <= 0x37;
}

/** A text field or element: NULL for `\N`, else its bytes with COPY's escapes decoded. */
function writeText(w: BinaryCopyWriter, line: Buffer, start: number, end: number): void {
  if (isNull(line, start, end)) return w.null();
  const slash = line.indexOf(BACKSLASH, start);
  if (slash < 0 || slash >= end) return w.text(line, start, end);
  const offset = w.reserve(end - start);
  const target = w.target;
  let o = offset;
  for (let k = start; k < end; k++) {
    const c = line[k] as number;
    if (c !== BACKSLASH) {
      target[o++] = c;
      continue;
    }
    const next = line[++k] as number;
    if (isOctal(next)) {
      let value = next - 0x30;
      for (let n = 0; n < 2 && isOctal(line[k + 1]) && k + 1 < end; n++)
        value = value * 8 + (line[++k] as number) - 0x30;
      target[o++] = value & 0xff;
    } else if (next === 0x78 && k + 1 < end && isHex(line[k + 1])) {
      let value = hexDigit(line[++k] as number);
      if (k + 1 < end && isHex(line[k + 1])) value = value * 16 + hexDigit(line[++k] as number);
      target[o++] = value;
    } else target[o++] = ESCAPED[next] ?? next;
  }
  w.shrinkLast(offset, end - start, o - offset);
}

function isHex(c: number | undefined): boolean {
  return c !== undefined && (HEX[c] as number) >= 0;
}

/** Exact powers of ten as doubles: 10^0 … 10^22. */
const POWERS_OF_TEN = Array.from({ length: 23 }, (_, k) => 10 ** k);
const DIGIT_0 = 0x30;

/**
 * A JSON number's value when it has at most 15 significant digits and a decimal exponent within
 * ±22: then both the digits and the power of ten are exact doubles, and their one product or
 * quotient is the correctly rounded value (Clinger's fast path), which `Number` and PostgreSQL
 * give too. NaN outside that case (the caller falls back to `Number`).
 */
function fastNumber(line: Buffer, start: number, end: number): number {
  let k = start;
  const negative = line[k] === 0x2d;
  if (negative) k++;
  const first = k;
  let significand = 0;
  let digits = 0;
  let exponent = 0;
  let fraction = false;
  for (; k < end; k++) {
    const c = line[k] as number;
    if (c === 0x2e && !fraction) {
      fraction = true;
      continue;
    }
    const d = c - DIGIT_0;
    if (d < 0 || d > 9) break;
    if (significand !== 0 || d !== 0) digits++;
    significand = significand * 10 + d;
    if (fraction) exponent--;
  }
  if (k === first || (k === first + 1 && fraction)) return NaN;
  if (k < end) {
    const c = line[k] as number;
    if (c !== 0x65 && c !== 0x45) return NaN;
    k++;
    const sign = line[k] === 0x2d ? -1 : 1;
    if (line[k] === 0x2d || line[k] === 0x2b) k++;
    if (k === end) return NaN;
    let e = 0;
    for (; k < end; k++) {
      const d = (line[k] as number) - DIGIT_0;
      if (d < 0 || d > 9 || e > 1000) return NaN;
      e = e * 10 + d;
    }
    exponent += sign * e;
  }
  if (digits > 15 || exponent < -22 || exponent > 22) return NaN;
  const value =
    exponent < 0
      ? significand / (POWERS_OF_TEN[-exponent] as number)
      : significand * (POWERS_OF_TEN[exponent] as number);
  return negative ? -value : value;
}

function writeFloat(w: BinaryCopyWriter, line: Buffer, start: number, end: number): void {
  if (isNull(line, start, end)) return w.null();
  let n = fastNumber(line, start, end);
  if (Number.isNaN(n)) n = Number(latin1Text(line, start, end));
  if (Number.isNaN(n)) throw new Error('a metric COPY line whose number is not one');
  w.float8(n);
}

function writeInteger(w: BinaryCopyWriter, line: Buffer, start: number, end: number): void {
  if (isNull(line, start, end)) return w.null();
  const text = latin1Text(line, start, end);
  const n = Number(text);
  if (Number.isSafeInteger(n)) w.int8(n);
  else w.bigInt8(BigInt(text));
}

type ElementWriter = (w: BinaryCopyWriter, line: Buffer, start: number, end: number) => void;

/** The arrays after the block's bucket, app and name, in `metric_blocks` column order (id and ts apart). */
const VALUE_ARRAYS: ReadonlyArray<readonly [number, number, ElementWriter]> = [
  [F.version, ELEMENT_OID.text, writeText],
  [F.env, ELEMENT_OID.text, writeText],
  [F.value, ELEMENT_OID.float8, writeFloat],
  [F.count, ELEMENT_OID.int8, writeInteger],
  [F.min, ELEMENT_OID.float8, writeFloat],
  [F.max, ELEMENT_OID.float8, writeFloat],
  [F.sum, ELEMENT_OID.float8, writeFloat],
  [F.message, ELEMENT_OID.text, writeText],
  [F.attributes, ELEMENT_OID.text, writeText],
];

/** Line indexes in ts order (stable), with each line's ts. */
function tsOrder(lines: readonly Buffer[]): { order: Uint32Array; ts: Float64Array } {
  const timestamp = new LineTimestamp();
  const ts = new Float64Array(lines.length);
  const order = new Uint32Array(lines.length);
  for (let i = 0; i < lines.length; i++) {
    ts[i] = timestamp.read(lines[i] as Buffer).ts;
    order[i] = i;
  }
  order.sort((a, b) => (ts[a] as number) - (ts[b] as number));
  return { order, ts };
}

/** Whether lines `a` and `b` have the same bytes from their app field to the end of their name. */
function sameAppAndName(lines: readonly Buffer[], bounds: Int32Array, a: number, b: number): boolean {
  const lineA = lines[a] as Buffer;
  const lineB = lines[b] as Buffer;
  const startA = bounds[a * (FIELDS + 1) + F.app] as number;
  const startB = bounds[b * (FIELDS + 1) + F.app] as number;
  const length = (bounds[a * (FIELDS + 1) + F.name + 1] as number) - startA;
  if ((bounds[b * (FIELDS + 1) + F.name + 1] as number) - startB !== length) return false;
  for (let k = 0; k < length; k++) if (lineA[startA + k] !== lineB[startB + k]) return false;
  return true;
}

/**
 * Line indexes grouped by (minute, app, name), each group in ts order, groups by their first
 * sample. Groups are found by a hash of the minute and the bytes, without a string per line.
 */
function blocksOf(
  lines: readonly Buffer[],
  bounds: Int32Array,
  order: Uint32Array,
  ts: Float64Array,
): number[][] {
  const groups: number[][] = [];
  const byHash = new Map<number, number[][]>();
  for (const i of order) {
    const line = lines[i] as Buffer;
    const at = i * (FIELDS + 1);
    const t = ts[i] as number;
    // The same truncation as SQL's `ts - ts % 60000`, which the readers use.
    const minute = t - (t % MINUTE_MS);
    let hash = (minute / MINUTE_MS) | 0;
    const end = (bounds[at + F.name + 1] as number) - 1;
    for (let k = bounds[at + F.app] as number; k < end; k++)
      hash = Math.imul(hash ^ (line[k] as number), 0x01000193);
    const candidates = byHash.get(hash);
    const group = candidates?.find((g) => {
      const f = g[0] as number;
      const tf = ts[f] as number;
      return tf - (tf % MINUTE_MS) === minute && sameAppAndName(lines, bounds, f, i);
    });
    if (group !== undefined) {
      group.push(i);
      continue;
    }
    const created = [i];
    groups.push(created);
    if (candidates === undefined) byHash.set(hash, [created]);
    else candidates.push(created);
  }
  return groups;
}

/** The batch's metric sample lines (`METRIC_SAMPLES` order) as key and block COPY payloads. */
export function metricBlocksCopy(lines: readonly Buffer[]): MetricBlocksPayloads {
  const bounds = fieldBounds(lines);
  const { order, ts } = tsOrder(lines);
  const ids = new Uint8Array(lines.length * 16);
  let textBytes = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as Buffer;
    textBytes += line.length;
    decodeUuid(line, 0, (bounds[i * (FIELDS + 1) + 1] as number) - 1, ids, i * 16);
  }
  const keys = new BinaryCopyWriter(lines.length * 34 + 32);
  for (const i of order) {
    keys.tuple(2);
    keys.int8(ts[i] as number);
    writeUuid(keys, ids, i);
  }
  const blocks = new BinaryCopyWriter(textBytes + lines.length * 64 + 1024);
  /** Field `f` of each sample of `block`, as `write` writes it. */
  const column = (block: readonly number[], f: number, write: ElementWriter): void => {
    for (const i of block) {
      const at = i * (FIELDS + 1) + f;
      write(blocks, lines[i] as Buffer, bounds[at] as number, (bounds[at + 1] as number) - 1);
      blocks.element();
    }
  };
  for (const block of blocksOf(lines, bounds, order, ts)) {
    const first = block[0] as number;
    const line = lines[first] as Buffer;
    const at = first * (FIELDS + 1);
    const t = ts[first] as number;
    blocks.tuple(14);
    blocks.int8(t - (t % MINUTE_MS));
    writeText(blocks, line, bounds[at + F.app] as number, (bounds[at + F.app + 1] as number) - 1);
    writeText(blocks, line, bounds[at + F.name] as number, (bounds[at + F.name + 1] as number) - 1);
    blocks.startArray(ELEMENT_OID.uuid);
    for (const i of block) {
      writeUuid(blocks, ids, i);
      blocks.element();
    }
    blocks.endArray();
    blocks.startArray(ELEMENT_OID.int8);
    for (const i of block) {
      blocks.int8(ts[i] as number);
      blocks.element();
    }
    blocks.endArray();
    for (const [f, oid, write] of VALUE_ARRAYS) {
      blocks.startArray(oid);
      column(block, f, write);
      blocks.endArray();
    }
  }
  return { keys: keys.finish(), blocks: blocks.finish() };
}
