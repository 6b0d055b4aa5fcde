import { latin1Text } from '../../events/scan/byte-range';
import { BinaryCopyWriter, ELEMENT_OID } from './binary-copy-writer';
import { BLOCK_COLUMNS } from './metric-block-columns';
import {
  SAMPLE_APP_FIELD_AT,
  SAMPLE_FIELD as F,
  SAMPLE_FIELDS,
  sampleFieldBounds,
  sampleTs,
} from './sample-fields';

/*
 * A batch's metric samples as the binary COPY payload of `metric_blocks` (migrations 009, 012):
 * one block per (app, name, UTC minute, origin) of the batch, its samples' columns as arrays in the
 * samples' ts order. Each sample is already its binary COPY fields (sample-fields.ts), which are
 * also an array element's form: blocks are the samples' bytes copied, with nothing parsed. No key
 * row is written: a resent sample is a second copy in its group, which reads merge away and the
 * rewrite job removes (metric-block-merge.ts).
 */

const MINUTE_MS = 60_000;
const STRIDE = SAMPLE_FIELDS + 1;

/** `COPY` of what `metricBlocksCopy` makes; `seq` and `merged` take their defaults (migration 012). */
export const METRIC_BLOCKS_COPY = `COPY metric_blocks (${BLOCK_COLUMNS}, origin) FROM STDIN (FORMAT binary)`;

/**
 * A block's (app, name, minute) and its number of samples, what stored-records.ts records for it.
 * App and name are their UTF-8 bytes as Latin-1 text (one character per byte), so they are written
 * back as the same bytes.
 */
export interface MetricBlockKey {
  readonly app: string;
  readonly name: string;
  readonly minute: number;
  readonly samples: number;
}

export interface MetricBlocksPayloads {
  readonly blocks: Buffer;
  /** One per block, in the blocks' order. */
  readonly blockKeys: readonly MetricBlockKey[];
}

/** The arrays after the block's bucket, app and name, in `metric_blocks` column order. */
const ARRAYS: ReadonlyArray<readonly [number, number]> = [
  [F.id, ELEMENT_OID.uuid],
  [F.ts, ELEMENT_OID.int8],
  [F.version, ELEMENT_OID.text],
  [F.env, ELEMENT_OID.text],
  [F.value, ELEMENT_OID.float8],
  [F.count, ELEMENT_OID.int8],
  [F.min, ELEMENT_OID.float8],
  [F.max, ELEMENT_OID.float8],
  [F.sum, ELEMENT_OID.float8],
  [F.message, ELEMENT_OID.text],
  [F.attributes, ELEMENT_OID.text],
];

/** Sample indexes in ts order (stable), with each sample's ts. */
function tsOrder(samples: readonly Buffer[]): { order: Uint32Array; ts: Float64Array } {
  const ts = new Float64Array(samples.length);
  const order = new Uint32Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    ts[i] = sampleTs(samples[i] as Buffer);
    order[i] = i;
  }
  order.sort((a, b) => (ts[a] as number) - (ts[b] as number));
  return { order, ts };
}

/** End of sample `i`'s name field: its app and name fields are its bytes from SAMPLE_APP_FIELD_AT to here. */
function appNameEnd(bounds: Int32Array, i: number): number {
  return bounds[i * STRIDE + F.name + 1] as number;
}

/** Whether samples `a` and `b` have the same app and name fields, byte for byte. */
function sameAppAndName(samples: readonly Buffer[], bounds: Int32Array, a: number, b: number): boolean {
  const end = appNameEnd(bounds, a);
  if (appNameEnd(bounds, b) !== end) return false;
  const sa = samples[a] as Buffer;
  const sb = samples[b] as Buffer;
  for (let k = SAMPLE_APP_FIELD_AT; k < end; k++) if (sa[k] !== sb[k]) return false;
  return true;
}

/**
 * Sample indexes grouped by (minute, app, name, origin), each group in ts order, groups by their
 * first sample. Groups are found by a hash of the minute and the bytes, without a string per
 * sample.
 */
function blocksOf(
  samples: readonly Buffer[],
  bounds: Int32Array,
  order: Uint32Array,
  ts: Float64Array,
  origins: readonly string[] | undefined,
): number[][] {
  const groups: number[][] = [];
  const byHash = new Map<number, number[][]>();
  for (const i of order) {
    const s = samples[i] as Buffer;
    const t = ts[i] as number;
    // The same truncation as SQL's `ts - ts % 60000`, which the readers use.
    const minute = t - (t % MINUTE_MS);
    let hash = (minute / MINUTE_MS) | 0;
    const end = appNameEnd(bounds, i);
    for (let k = SAMPLE_APP_FIELD_AT; k < end; k++) hash = Math.imul(hash ^ (s[k] as number), 0x01000193);
    const candidates = byHash.get(hash);
    const group = candidates?.find((g) => {
      const f = g[0] as number;
      const tf = ts[f] as number;
      return (
        tf - (tf % MINUTE_MS) === minute &&
        origins?.[f] === origins?.[i] &&
        sameAppAndName(samples, bounds, f, i)
      );
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

/** Text field `f` of a sample (not NULL) as Latin-1 text of its bytes. */
function latin1Field(sample: Buffer, bounds: Int32Array, i: number, f: number): string {
  const at = bounds[i * STRIDE + f] as number;
  return latin1Text(sample, at + 4, bounds[i * STRIDE + f + 1] as number);
}

/**
 * The batch's metric samples (sample-fields.ts) as a block COPY payload; `origins[i]` is sample
 * `i`'s loss-map origin (`''` for every sample when absent).
 */
export function metricBlocksCopy(
  samples: readonly Buffer[],
  origins?: readonly string[],
): MetricBlocksPayloads {
  const bounds = sampleFieldBounds(samples);
  const { order, ts } = tsOrder(samples);
  let bytes = 0;
  for (const s of samples) bytes += s.length;
  const blocks = new BinaryCopyWriter(bytes + 1024);
  const blockKeys: MetricBlockKey[] = [];
  for (const block of blocksOf(samples, bounds, order, ts, origins)) {
    const first = block[0] as number;
    const s = samples[first] as Buffer;
    const t = ts[first] as number;
    const minute = t - (t % MINUTE_MS);
    blocks.tuple(15);
    blocks.int8(minute);
    blocks.field(s, SAMPLE_APP_FIELD_AT, appNameEnd(bounds, first));
    for (const [f, oid] of ARRAYS) {
      blocks.startArray(oid);
      for (const i of block) {
        const at = i * STRIDE + f;
        blocks.elementField(samples[i] as Buffer, bounds[at] as number, bounds[at + 1] as number);
      }
      blocks.endArray();
    }
    const origin = Buffer.from(origins?.[first] ?? '', 'latin1');
    blocks.text(origin, 0, origin.length);
    blockKeys.push({
      app: latin1Field(s, bounds, first, F.app),
      name: latin1Field(s, bounds, first, F.name),
      minute,
      samples: block.length,
    });
  }
  return { blocks: blocks.finish(), blockKeys };
}

/** The samples as a binary COPY payload of a table of `METRIC_SAMPLES`' columns (a staging table). */
export function samplesCopy(samples: readonly Buffer[]): Buffer {
  sampleFieldBounds(samples);
  let bytes = 0;
  for (const s of samples) bytes += s.length + 2;
  const w = new BinaryCopyWriter(bytes + 32);
  for (const s of samples) {
    w.tuple(SAMPLE_FIELDS);
    w.field(s, 0, s.length);
  }
  return w.finish();
}
