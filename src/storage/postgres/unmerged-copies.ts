/*
 * The loss map's counts of an app as the merge job will leave them (docs/ARCHITECTURE.md, "The
 * loss map", `duplicate`). The writer counts every metric sample it stores, resent copies too, and
 * `merge_metric_blocks` moves each removed copy from `stored` to `duplicate` once its group is past
 * the resend window (metric-block-merge.ts). Until then the copies are in unmerged blocks, and the
 * reads already keep one of each; the loss map counts them here the same way, so a resend never
 * shows as more stored than generated (a negative `pending`). In the read's snapshot a group is
 * either unmerged, and counted here, or merged with its correction written: never both.
 */

/**
 * Rows of `event_outcomes`' shape (minute, type, outcome, reason, origin, count) for app `$1` in
 * [`$2`, `$3`): what the merge job will write for the copies it has not removed yet, `stored` −n
 * and `duplicate` +n, as its statement writes them. `copies` are the copies beyond the first of
 * each (ts, id) in the groups with an unmerged block, per (minute, origin of the copy's block),
 * first by the same order as the job (`seq`, then place in block); the groups are found through
 * the partial index of unmerged blocks, their blocks through `(name, bucket)`.
 */
export const UNMERGED_COPY_CORRECTIONS = `(
WITH unmerged AS (
  SELECT DISTINCT bucket, name FROM metric_blocks
   WHERE NOT merged AND app = $1 AND bucket >= $2 AND bucket < $3),
copies AS MATERIALIZED (
  SELECT bucket AS minute, origin, count(*) AS n
    FROM (SELECT b.bucket, b.origin,
                 row_number() OVER (PARTITION BY b.bucket, b.name, s.ts, s.id ORDER BY b.seq, s.n) AS copy
            FROM unmerged u
                 JOIN metric_blocks b ON b.name = u.name AND b.bucket = u.bucket AND b.app = $1
                 CROSS JOIN LATERAL unnest(b.ts, b.id) WITH ORDINALITY AS s(ts, id, n)) c
   WHERE copy > 1
   GROUP BY bucket, origin)
SELECT minute, 'metric' AS type, 'stored' AS outcome, '' AS reason, '' AS origin, -sum(n) AS count
  FROM copies GROUP BY minute
UNION ALL
SELECT minute, 'metric', 'duplicate', 'duplicate', origin, n FROM copies)`;
