import { ROLLUP_TABLE, ROLLUP_WIDTH_MS } from './rollups';

/*
 * The sources of the invalidated-bucket folds, in SQL both adapters run: which rows recompute a
 * claimed bucket, and how they combine. Raw samples: a summary counts as its count, and its
 * min/max/sum stand for its samples'. Each adapter wraps them in its own upsert.
 *
 * Sums never fail on overflow: each term is divided by 2^32 before it is added (exact for every
 * double above 2^-990, so the sum is the one float64 addition would give), and the total is
 * multiplied back, becoming ±Infinity when it leaves a double's range (±1.8e308). PostgreSQL's
 * float8 addition raises "value out of range" instead, which stopped the whole run. The intake
 * bound (events/metric-bound.ts, METRIC_VALUE_BOUND) keeps new samples far from it; what is stored
 * from before it, or 1.8e8 samples at the bound in one bucket, reads as ±Infinity.
 */

const MINUTE_MS = ROLLUP_WIDTH_MS['1m'];
const HOUR_MS = ROLLUP_WIDTH_MS['1h'];

/** log2 of the divisor of every summed term. */
export const SUM_SCALE_EXPONENT = 32;
/** 2^SUM_SCALE_EXPONENT as an SQL float literal (exact in both dialects). */
export const SUM_SCALE = '4294967296.0';

/** What the two dialects spell differently. */
export interface FoldDialect {
  /** Placeholders: first and one-past-last index (`i`) of the claimed buckets one fold covers. */
  readonly from: string;
  readonly to: string;
  /** Placeholder of the line (epoch ms) below which hours fold from raw samples. */
  readonly rawBefore: string;
  /**
   * `scaled` (a sum of terms divided by 2^SUM_SCALE_EXPONENT) multiplied back: ±Infinity past a
   * double's range, NULL when it is NaN (+Infinity and −Infinity met), which the NOT NULL
   * column refuses, so that bucket alone is skipped (see fold-isolation.ts).
   */
  readonly unscale: (scaled: string) => string;
}

/**
 * The sum of `term` over a group that never raises: terms divided by 2^SUM_SCALE_EXPONENT, the
 * total multiplied back by `unscale` (a dialect's `FoldDialect.unscale`).
 */
export function sumOf(term: string, unscale: (scaled: string) => string): string {
  return unscale(`sum(${term} / ${SUM_SCALE})`);
}

export interface FoldSources {
  /** 1m buckets of the claimed minutes, from raw samples. */
  readonly minutes: string;
  /** 1h buckets of the claimed minutes' hours from `rawBefore` on, from 1m rows. */
  readonly hoursFrom1m: string;
  /** 1h buckets of the claimed minutes' hours before `rawBefore`, from raw samples. */
  readonly hoursFromRaw: string;
}

/** The distinct (name, app, hour) of the claimed minutes `from ≤ i < to`. */
export function claimedHours(claimed: string, d: Pick<FoldDialect, 'from' | 'to'>): string {
  return `SELECT DISTINCT name, app, bucket - bucket % ${HOUR_MS} AS hour FROM ${claimed}
    WHERE i >= ${d.from} AND i < ${d.to}`;
}

/**
 * A bucket's count, min, max and sum from the raw samples `s` of a group, in that order: a summary
 * counts as its count, and its min/max/sum stand for its samples'.
 */
export function rawAggregates(unscale: FoldDialect['unscale']): readonly [string, string, string, string] {
  return [
    'CAST(sum(COALESCE(s.count, 1)) AS bigint)',
    'min(COALESCE(s.min, s.value))',
    'max(COALESCE(s.max, s.value))',
    sumOf('COALESCE(s.sum, s.value)', unscale),
  ];
}

/**
 * `claimed`: the table of claimed (i, name, app, bucket) minutes, `i` numbering them from 0; each
 * source covers those with `from ≤ i < to`. Every SELECT has a WHERE clause, which SQLite needs
 * to parse an upsert after `INSERT … SELECT`.
 */
export function foldSources(claimed: string, d: FoldDialect): FoldSources {
  const sum = (term: string) => sumOf(term, d.unscale);
  const raw = rawAggregates(d.unscale).join(', ');
  const hours = claimedHours(claimed, d);
  return {
    minutes: `SELECT s.name, s.ts - s.ts % ${MINUTE_MS}, s.app, ${raw}
     FROM ${claimed} b JOIN metric_samples s
       ON s.name = b.name AND s.app = b.app AND s.ts >= b.bucket AND s.ts < b.bucket + ${MINUTE_MS}
    WHERE b.i >= ${d.from} AND b.i < ${d.to} AND COALESCE(s.sum, s.value) IS NOT NULL
    GROUP BY 1, 2, 3`,
    hoursFrom1m: `SELECT m.name, h.hour, m.app, CAST(sum(m.count) AS bigint), min(m.min), max(m.max), ${sum('m.sum')}
     FROM (${hours}) h JOIN ${ROLLUP_TABLE['1m']} m
       ON m.name = h.name AND m.app = h.app AND m.bucket >= h.hour AND m.bucket < h.hour + ${HOUR_MS}
    WHERE h.hour >= ${d.rawBefore}
    GROUP BY 1, 2, 3`,
    hoursFromRaw: `SELECT s.name, h.hour, s.app, ${raw}
     FROM (${hours}) h JOIN metric_samples s
       ON s.name = h.name AND s.app = h.app AND s.ts >= h.hour AND s.ts < h.hour + ${HOUR_MS}
    WHERE h.hour < ${d.rawBefore} AND COALESCE(s.sum, s.value) IS NOT NULL
    GROUP BY 1, 2, 3`,
  };
}
