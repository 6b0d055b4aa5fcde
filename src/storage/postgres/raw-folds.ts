import { rawAggregates, claimedHours, type FoldDialect, type FoldSources } from '../layout/rollup-folds';
import { ROLLUP_WIDTH_MS } from '../layout/rollups';

/*
 * PostgreSQL's folds from raw samples: the rows of `foldSources` (the same buckets, the same
 * aggregates), read once per (name, bucket) for all of its claimed apps. Joined per (name, app,
 * bucket), as SQLite ran them before its migration 8, the `(name, ts)` index hands each bucket
 * the samples of every app of that name, and the filter drops the other apps': a sample was
 * read once for each app claimed in its bucket (six times with the bench's six apps, most of a fold's CPU), and the planner
 * sorted all of them to group them. Here each (name, bucket) is one index range read, aggregated
 * per app by hash; the claimed apps are an array, so a sample of an app not claimed is skipped
 * before it is aggregated. The samples are read through `metric_sample_values`, a view of the
 * blocks' numbers (migration 9): the range on its `bucket` is the one index range read, of
 * `metric_blocks_name_bucket`, and the blocks of other apps are skipped before they are unnested;
 * claimed buckets start on a minute (or an hour), so the blocks of the range hold exactly the
 * samples of the bucket.
 */

/** The raw-sample fold of each (name, bucket, apps) row of `buckets`, `widthMs` wide. */
function perName(buckets: string, widthMs: number, unscale: FoldDialect['unscale']): string {
  const [count, min, max, sum] = rawAggregates(unscale);
  return `SELECT b.name, b.bucket, a.app, a.count, a.min, a.max, a.sum
     FROM (${buckets}) b
     CROSS JOIN LATERAL (
       SELECT s.app, ${count} AS count, ${min} AS min, ${max} AS max, ${sum} AS sum
         FROM metric_sample_values s
        WHERE s.name = b.name AND s.bucket >= b.bucket AND s.bucket < b.bucket + ${widthMs}
          AND s.ts >= b.bucket AND s.ts < b.bucket + ${widthMs}
          AND s.app = ANY (b.apps) AND COALESCE(s.sum, s.value) IS NOT NULL
        GROUP BY s.app) a`;
}

/** `foldSources`' `minutes` and `hoursFromRaw` as PostgreSQL runs them (see above). */
export function rawFoldsPerName(
  claimed: string,
  d: FoldDialect,
): Pick<FoldSources, 'minutes' | 'hoursFromRaw'> {
  const minutes = `SELECT name, bucket, array_agg(app) AS apps FROM ${claimed}
    WHERE i >= ${d.from} AND i < ${d.to} GROUP BY name, bucket`;
  const hours = `SELECT name, hour AS bucket, array_agg(app) AS apps FROM (${claimedHours(claimed, d)}) h
    WHERE hour < ${d.rawBefore} GROUP BY name, hour`;
  return {
    minutes: perName(minutes, ROLLUP_WIDTH_MS['1m'], d.unscale),
    hoursFromRaw: perName(hours, ROLLUP_WIDTH_MS['1h'], d.unscale),
  };
}
