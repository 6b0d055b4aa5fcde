import type { SlabWriter } from '../../events/scan/slab-writer';

/*
 * A metric sample as the writer holds it: its `METRIC_SAMPLES` columns (layout/columns.ts) as
 * binary COPY fields, each a 32-bit length (-1 for NULL) and the column's send form: id (uuid, 16
 * bytes), ts (bigint), app, name, version, env (text, UTF-8), value (float8), count (bigint), min,
 * max, sum (float8), message, attributes (text: canonical JSON). A field's form is also an array
 * element's, so a block's arrays are its samples' fields copied as they are (metric-blocks-copy.ts),
 * and a staging table takes a sample as one binary COPY tuple. Nothing is formatted as text and
 * read back: the typed path (copy-encoding.ts) and the single pass (copy-line-from-scan.ts) write
 * the same bytes for the same event through the writers below.
 */

/** How many fields a sample has. */
export const SAMPLE_FIELDS = 13;
/** Index of each field. */
export const SAMPLE_FIELD = {
  id: 0,
  ts: 1,
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
/** Where the ts field starts: after the id's length and 16 bytes. */
export const SAMPLE_TS_FIELD_AT = 20;
/** Where the app field starts: after the ts's length and 8 bytes. */
export const SAMPLE_APP_FIELD_AT = 32;
/** Room a sample's fields take besides its text: 13 lengths, the id, ts and numbers (bytes). */
export const SAMPLE_FIXED_BYTES = SAMPLE_FIELDS * 4 + 16 + 8 * 6;

const TWO_32 = 0x1_0000_0000;

/** Big-endian 32-bit integer at `at` of `b`, read byte by byte (no Buffer method: see SlabWriter.view). */
function int32At(b: Uint8Array, at: number): number {
  return (
    ((b[at] as number) << 24) |
    ((b[at + 1] as number) << 16) |
    ((b[at + 2] as number) << 8) |
    (b[at + 3] as number)
  );
}

/** The ts of a sample (epoch milliseconds), from its ts field. */
export function sampleTs(sample: Buffer): number {
  return int32At(sample, SAMPLE_TS_FIELD_AT + 4) * TWO_32 + (int32At(sample, SAMPLE_TS_FIELD_AT + 8) >>> 0);
}

/**
 * The fields' bounds of each of `samples`: field f of sample i is its bytes, length included, from
 * `bounds[i * 14 + f]` up to `bounds[i * 14 + f + 1]`. Throws on bytes that are not a sample's
 * fields (a count other than 13, an id or ts of the wrong size): nothing is derived from them.
 */
export function sampleFieldBounds(samples: readonly Buffer[]): Int32Array {
  const bounds = new Int32Array(samples.length * (SAMPLE_FIELDS + 1));
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i] as Buffer;
    const at = i * (SAMPLE_FIELDS + 1);
    let k = 0;
    for (let f = 0; f < SAMPLE_FIELDS; f++) {
      bounds[at + f] = k;
      if (k + 4 > s.length) throw new Error('a metric sample of fewer fields than metric_samples has');
      const length = int32At(s, k);
      k += 4 + Math.max(0, length);
    }
    if (k !== s.length) throw new Error('a metric sample of more bytes than its fields hold');
    if (int32At(s, 0) !== 16 || int32At(s, SAMPLE_TS_FIELD_AT) !== 8)
      throw new Error('a metric sample whose id or ts is not one');
    bounds[at + SAMPLE_FIELDS] = k;
  }
  return bounds;
}

/** Each byte's value as a hex digit, -1 for any other byte. */
const HEX = new Int8Array(256).fill(-1);
for (let d = 0; d < 16; d++) {
  HEX[d.toString(16).charCodeAt(0)] = d;
  HEX[d.toString(16).toUpperCase().charCodeAt(0)] = d;
}
/** Offsets of a UUID's 16 bytes' hex digit pairs in its 36-character text form. */
const UUID_PAIRS = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

/** A uuid field from the 36 characters of its text at `start` of `text` (validated: hex digits and dashes). */
export function uuidField(w: SlabWriter, text: Uint8Array, start: number): void {
  const b = w.buf;
  w.view.setInt32(w.at, 16);
  let o = w.at + 4;
  for (let k = 0; k < 16; k++) {
    const p = start + (UUID_PAIRS[k] as number);
    b[o++] = ((HEX[text[p] as number] as number) << 4) | (HEX[text[p + 1] as number] as number);
  }
  w.at = o;
}

/** A uuid field from its text `id` (validated: 36 characters, hex digits and dashes). */
export function uuidStringField(w: SlabWriter, id: string): void {
  const b = w.buf;
  w.view.setInt32(w.at, 16);
  let o = w.at + 4;
  for (let k = 0; k < 16; k++) {
    const p = UUID_PAIRS[k] as number;
    b[o++] = ((HEX[id.charCodeAt(p)] as number) << 4) | (HEX[id.charCodeAt(p + 1)] as number);
  }
  w.at = o;
}

/** A bigint field; `n` a safe integer. */
export function int8Field(w: SlabWriter, n: number): void {
  const v = w.view;
  v.setInt32(w.at, 8);
  // Floor division keeps the two's-complement split right for negative numbers.
  const high = Math.floor(n / TWO_32);
  v.setInt32(w.at + 4, high);
  v.setUint32(w.at + 8, n - high * TWO_32);
  w.at += 12;
}

/** A float8 field; -0 is stored as 0, as the text forms every other writer sends make it. */
export function float8Field(w: SlabWriter, n: number): void {
  w.view.setInt32(w.at, 8);
  w.view.setFloat64(w.at + 4, n + 0);
  w.at += 12;
}

export function nullField(w: SlabWriter): void {
  w.view.setInt32(w.at, -1);
  w.at += 4;
}

/** Starts a text field: its bytes follow, then `endTextField` with what this returns. */
export function startTextField(w: SlabWriter): number {
  const lengthAt = w.at;
  w.at += 4;
  return lengthAt;
}

export function endTextField(w: SlabWriter, lengthAt: number): void {
  w.view.setInt32(lengthAt, w.at - lengthAt - 4);
}

/** A text field of `s` (storable text), as UTF-8. */
export function stringField(w: SlabWriter, s: string): void {
  const lengthAt = startTextField(w);
  w.at += w.buf.write(s, w.at, 'utf8');
  endTextField(w, lengthAt);
}
