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
 * The copies beyond the first of each (ts, id) in the groups of app `$1` with an unmerged block and
 * a minute in [`$2`, `$3`), per (minute, origin of the copy's block), first by the same order as
 * the job (`seq`, then place in block).
 */
const UNMERGED_COPIES = `
SELECT bucket AS minute, origin, count(*) AS n
  FROM (SELECT b.bucket, b.origin,
               row_number() OVER (PARTITION BY b.bucket, b.name, s.ts, s.id ORDER BY b.seq, s.n) AS copy
          FROM metric_blocks b
               CROSS JOIN LATERAL unnest(b.ts, b.id) WITH ORDINALITY AS s(ts, id, n)
         WHERE b.app = $1 AND b.bucket >= $2 AND b.bucket < $3
           AND (b.bucket, b.name) IN (SELECT u.bucket, u.name FROM metric_blocks u
                                       WHERE NOT u.merged AND u.app = $1 AND u.bucket >= $2 AND u.bucket < $3)) c
 WHERE copy > 1
 GROUP BY bucket, origin`;

/**
 * Rows of `event_outcomes`' shape (minute, type, outcome, reason, origin, count) for app `$1` in
 * [`$2`, `$3`): what the merge job will write for the copies it has not removed yet, `stored` −n
 * and `duplicate` +n, as its statement writes them.
 */
export const UNMERGED_COPY_CORRECTIONS = `
SELECT minute, 'metric' AS type, 'stored' AS outcome, '' AS reason, '' AS origin, -sum(n) AS count
  FROM (${UNMERGED_COPIES}) d GROUP BY minute
UNION ALL
SELECT minute, 'metric', 'duplicate', 'duplicate', origin, n FROM (${UNMERGED_COPIES}) d`;
