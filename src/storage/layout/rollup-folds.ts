import { ROLLUP_TABLE, ROLLUP_WIDTH_MS } from './rollups';

/*
 * The sources of the invalidated-bucket folds, in SQL both adapters run: which rows recompute a
 * taken bucket, and how they combine. Raw samples: a summary counts as its count, and its
 * min/max/sum stand for its samples'. Each adapter wraps them in its own upsert.
 */

const MINUTE_MS = ROLLUP_WIDTH_MS['1m'];
const HOUR_MS = ROLLUP_WIDTH_MS['1h'];

const RAW_FIGURES = `CAST(sum(COALESCE(s.count, 1)) AS bigint), min(COALESCE(s.min, s.value)),
            max(COALESCE(s.max, s.value)), sum(COALESCE(s.sum, s.value))`;

export interface FoldSources {
  /** 1m buckets of the taken minutes, from raw samples. */
  readonly minutes: string;
  /** 1h buckets of the taken minutes' hours from `rawBefore` on, from 1m rows. */
  readonly hoursFrom1m: string;
  /** 1h buckets of the taken minutes' hours before `rawBefore`, from raw samples. */
  readonly hoursFromRaw: string;
}

/**
 * `taken`: the table of taken (name, app, bucket) minutes; `rawBefore`: the adapter's placeholder
 * for the line below which hours fold from raw samples. Every SELECT has a WHERE clause, which
 * SQLite needs to parse an upsert after `INSERT … SELECT`.
 */
export function foldSources(taken: string, rawBefore: string): FoldSources {
  const hours = `SELECT DISTINCT name, app, bucket - bucket % ${HOUR_MS} AS hour FROM ${taken}`;
  return {
    minutes: `SELECT s.name, s.ts - s.ts % ${MINUTE_MS}, s.app, ${RAW_FIGURES}
     FROM ${taken} b JOIN metric_samples s
       ON s.name = b.name AND s.app = b.app AND s.ts >= b.bucket AND s.ts < b.bucket + ${MINUTE_MS}
    WHERE COALESCE(s.sum, s.value) IS NOT NULL
    GROUP BY 1, 2, 3`,
    hoursFrom1m: `SELECT m.name, h.hour, m.app, CAST(sum(m.count) AS bigint), min(m.min), max(m.max), sum(m.sum)
     FROM (${hours}) h JOIN ${ROLLUP_TABLE['1m']} m
       ON m.name = h.name AND m.app = h.app AND m.bucket >= h.hour AND m.bucket < h.hour + ${HOUR_MS}
    WHERE h.hour >= ${rawBefore}
    GROUP BY 1, 2, 3`,
    hoursFromRaw: `SELECT s.name, h.hour, s.app, ${RAW_FIGURES}
     FROM (${hours}) h JOIN metric_samples s
       ON s.name = h.name AND s.app = h.app AND s.ts >= h.hour AND s.ts < h.hour + ${HOUR_MS}
    WHERE h.hour < ${rawBefore} AND COALESCE(s.sum, s.value) IS NOT NULL
    GROUP BY 1, 2, 3`,
  };
}
