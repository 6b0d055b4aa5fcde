import {
  rawAggregates,
  sumOf,
  claimedHours,
  type FoldDialect,
  type FoldSources,
} from '../layout/rollup-folds';
import { ROLLUP_TABLE, ROLLUP_WIDTH_MS } from '../layout/rollups';

/*
 * SQLite's sources of the invalidated-bucket folds: the rows of `foldSources` (the same buckets,
 * the same aggregates), each claimed (name, app, bucket) read through an index whose key starts
 * with (app, name), so a fold reads only the rows of its own buckets. Through `(name, ts)` (or the
 * 1m rollups' `(name, bucket, app)` key), each claimed bucket read the rows of every app of its name
 * in its minute: 50,000 apps of one metric in one minute cost 50,000² rows, minutes of one
 * statement with the event loop stopped throughout. Without statistics SQLite's planner still
 * prefers `(name, ts)`, so the index is named (`INDEXED BY`, migration 8).
 */

const MINUTE_MS = ROLLUP_WIDTH_MS['1m'];
const HOUR_MS = ROLLUP_WIDTH_MS['1h'];

/** `foldSources(claimed, d)` as SQLite runs them (see above). */
export function sqliteFoldSources(claimed: string, d: FoldDialect): FoldSources {
  const raw = rawAggregates(d.unscale).join(', ');
  const hours = claimedHours(claimed, d);
  return {
    minutes: `SELECT b.name, b.bucket, b.app, ${raw}
     FROM ${claimed} b CROSS JOIN metric_samples s INDEXED BY metric_samples_app_name_ts
    WHERE b.i >= ${d.from} AND b.i < ${d.to}
      AND s.app = b.app AND s.name = b.name AND s.ts >= b.bucket AND s.ts < b.bucket + ${MINUTE_MS}
      AND COALESCE(s.sum, s.value) IS NOT NULL
    GROUP BY b.name, b.bucket, b.app`,
    hoursFrom1m: `SELECT h.name, h.hour, h.app, CAST(sum(m.count) AS bigint), min(m.min), max(m.max), ${sumOf('m.sum', d.unscale)}
     FROM (${hours}) h CROSS JOIN ${ROLLUP_TABLE['1m']} m INDEXED BY metric_rollups_1m_app_name_bucket
    WHERE h.hour >= ${d.rawBefore}
      AND m.app = h.app AND m.name = h.name AND m.bucket >= h.hour AND m.bucket < h.hour + ${HOUR_MS}
    GROUP BY h.name, h.hour, h.app`,
    hoursFromRaw: `SELECT h.name, h.hour, h.app, ${raw}
     FROM (${hours}) h CROSS JOIN metric_samples s INDEXED BY metric_samples_app_name_ts
    WHERE h.hour < ${d.rawBefore}
      AND s.app = h.app AND s.name = h.name AND s.ts >= h.hour AND s.ts < h.hour + ${HOUR_MS}
      AND COALESCE(s.sum, s.value) IS NOT NULL
    GROUP BY h.name, h.hour, h.app`,
  };
}
