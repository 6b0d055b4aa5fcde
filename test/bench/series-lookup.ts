import type { TelemetryEvent } from '../../src/events/types';
import { toCopyLine } from '../../src/storage/postgres/copy-encoding';
import { metricBlocksCopy } from '../../src/storage/postgres/metric-blocks-copy';
import {
  SAMPLE_APP_FIELD_AT,
  SAMPLE_FIELD as F,
  SAMPLE_FIELDS,
  sampleFieldBounds,
} from '../../src/storage/postgres/sample-fields';

/*
 * What a series dictionary would cost the collector: per sample, finding its series id in a cache
 * keyed by the sample's app, name and attributes bytes (as the writer holds them: binary COPY
 * fields, sample-fields.ts), against building today's block payload, in process, on the same
 * samples. The cache is warm (every series known): the steady state of a writer whose series
 * repeat. A miss costs an insert round trip, which the storage-cost variants measure on the server.
 */

const STRIDE = SAMPLE_FIELDS + 1;

interface Entry {
  readonly key: Buffer;
  readonly id: number;
}

/** The bytes that name a sample's series: its app and name fields, then its attributes field. */
function seriesKeyBytes(s: Buffer, bounds: Int32Array, i: number): Buffer {
  const nameEnd = bounds[i * STRIDE + F.name + 1] as number;
  const attrs = bounds[i * STRIDE + F.attributes] as number;
  return Buffer.concat([
    s.subarray(SAMPLE_APP_FIELD_AT, nameEnd),
    s.subarray(attrs, bounds[i * STRIDE + F.attributes + 1]),
  ]);
}

/** A cache of series ids by the bytes that name them, found by a hash without a string per sample. */
class SeriesCache {
  private readonly byHash = new Map<number, Entry[]>();

  /** FNV-1a over bytes `from`–`to` of `s` from `h`. */
  private static hash(s: Buffer, from: number, to: number, h: number): number {
    for (let k = from; k < to; k++) h = Math.imul(h ^ (s[k] as number), 0x01000193);
    return h;
  }

  /** A map key of 30 bits: a small integer, which V8 keeps unboxed (a 32-bit one it allocates). */
  private static key(h: number): number {
    return h & 0x3fffffff;
  }

  private static same(key: Buffer, s: Buffer, a0: number, a1: number, b0: number, b1: number): boolean {
    if (key.length !== a1 - a0 + (b1 - b0)) return false;
    let o = 0;
    for (let k = a0; k < a1; k++) if (key[o++] !== s[k]) return false;
    for (let k = b0; k < b1; k++) if (key[o++] !== s[k]) return false;
    return true;
  }

  /** The id of sample `i`'s series, or undefined when the cache does not know it. */
  find(s: Buffer, bounds: Int32Array, i: number): number | undefined {
    const nameEnd = bounds[i * STRIDE + F.name + 1] as number;
    const a0 = bounds[i * STRIDE + F.attributes] as number;
    const a1 = bounds[i * STRIDE + F.attributes + 1] as number;
    const h = SeriesCache.key(
      SeriesCache.hash(s, a0, a1, SeriesCache.hash(s, SAMPLE_APP_FIELD_AT, nameEnd, 0x811c9dc5)),
    );
    const list = this.byHash.get(h);
    if (list === undefined) return undefined;
    for (const e of list) if (SeriesCache.same(e.key, s, SAMPLE_APP_FIELD_AT, nameEnd, a0, a1)) return e.id;
    return undefined;
  }

  add(s: Buffer, bounds: Int32Array, i: number, id: number): void {
    const key = seriesKeyBytes(s, bounds, i);
    const h = SeriesCache.key(SeriesCache.hash(key, 0, key.length, 0x811c9dc5));
    const list = this.byHash.get(h);
    if (list === undefined) this.byHash.set(h, [{ key, id }]);
    else list.push({ key, id });
  }
}

/** Median of `reps` timings of `f` over `n` samples (microseconds per sample), after one untimed run. */
function timed(reps: number, n: number, f: () => void): number {
  f();
  const runs: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    f();
    runs.push(((performance.now() - t0) * 1e3) / n);
  }
  runs.sort((a, b) => a - b);
  return runs[Math.floor(runs.length / 2)] as number;
}

export interface SeriesLookupCost {
  /** Today's block payload of the samples (metricBlocksCopy), per sample (microseconds). */
  readonly blocksUs: number;
  /** The series id of every sample from a warm cache, field bounds included, per sample (microseconds). */
  readonly lookupUs: number;
  /** Distinct series among the samples. */
  readonly series: number;
}

/** The two costs over `samples` in batches of `batch` samples, `reps` times each (median). */
export function seriesLookupCost(
  samples: readonly TelemetryEvent[],
  batch: number,
  reps = 7,
): SeriesLookupCost {
  const fields = samples.map((e) => toCopyLine(e).bytes);
  const batches: Buffer[][] = [];
  for (let i = 0; i < fields.length; i += batch) batches.push(fields.slice(i, i + batch));
  const cache = new SeriesCache();
  let series = 0;
  for (const b of batches) {
    const bounds = sampleFieldBounds(b);
    b.forEach((s, i) => {
      if (cache.find(s, bounds, i) === undefined) cache.add(s, bounds, i, ++series);
    });
  }
  let sink = 0;
  let misses = 0;
  const lookupUs = timed(reps, fields.length, () => {
    for (const b of batches) {
      const bounds = sampleFieldBounds(b);
      for (let i = 0; i < b.length; i++) {
        const id = cache.find(b[i] as Buffer, bounds, i);
        if (id === undefined) misses++;
        else sink += id;
      }
    }
  });
  if (misses > 0) throw new Error(`series lookup: ${misses} lookups missed a warm cache`);
  const blocksUs = timed(reps, fields.length, () => {
    for (const b of batches) sink += metricBlocksCopy(b).blocks.length;
  });
  if (sink === 0) throw new Error('series lookup: nothing looked up');
  return { blocksUs, lookupUs, series };
}
