import type pg from 'pg';
import type { BlockMerge, BlockMergeLimits } from '../maintenance';
import { BLOCK_COLUMNS, BLOCK_SAMPLE_ARRAYS } from './metric-block-columns';

/*
 * The rewrite job's statement (migration 012; docs/metric-storage.md, "No key row per sample").
 * The writer stores every sample it is given, so a resent one is a second copy in a block of its
 * (bucket, app, name) group, and the views keep the copy of the lowest `seq` until the group is
 * merged here. A group that holds a copy, or whose unmerged blocks are small, is rewritten: its
 * blocks deleted and its distinct samples (the first copy of each, by `seq`, then place in block)
 * written again as merged blocks, in (ts, id) order, at most `MERGED_BLOCK_SAMPLES` each, with
 * the lowest `seq` of the group, so a copy written later still loses to them. Any other group
 * holds each sample once already: its unmerged blocks are only marked merged, which reads only
 * their ts and id arrays and writes no sample again (a busy series' blocks are large, and
 * rewriting them cost about 8 µs of PostgreSQL's CPU per sample). A group rewritten for its small
 * blocks is not searched for copies first: the rewrite removes them anyway. The removed copies are counted
 * in the loss map in the same statement: `stored` −n (the writer counted every copy it wrote) and
 * `duplicate` +n under each copy's origin, per (app, minute); so the counts add up at every
 * moment, and are exact once a group is merged.
 *
 * The group's samples are sorted once, by the window that finds the copies; `part` (which merged
 * block a sample goes to) is the rank of its distinct `(ts, id)` in that same order, and the
 * group's lowest `seq` a window over it too (a join of every sample to a per-group CTE ran as a
 * nested loop: samples × groups, 12 of the 15 s of a 500-group statement). The merged
 * arrays are aggregated from a subquery sorted by (group, part, ts, id), without an ORDER BY in
 * each `array_agg`: PostgreSQL 15 sorts for each such aggregate on its own (11 sorts of the group
 * per block), and an aggregate takes its rows in its input's order in a plan without parallel
 * workers, which a data-modifying statement never has. The merge test checks the order.
 *
 * One statement, one snapshot: a block committed while it runs is not seen, not deleted nor
 * marked, and leaves its group unmerged for the next run (reads merge it meanwhile). The app
 * deletion runs in REPEATABLE READ: a block this replaced or marked under it fails it with a
 * serialization failure, and it starts again (delete-app.ts).
 */

/**
 * Most samples in one merged block: a group of a busy series holds a block per write batch, and
 * one array of all its minute would make every read of it unnest the whole minute.
 */
export const MERGED_BLOCK_SAMPLES = 2_000;

/**
 * Unmerged blocks averaging fewer samples than this (and more than one in their group) are
 * rewritten even without a copy: small write batches leave many small blocks a minute, and every
 * read of the minute would fetch each.
 */
export const COMPACTED_BLOCK_SAMPLES = 100;

const ARRAYS = BLOCK_SAMPLE_ARRAYS.join(', ');
const AGGREGATED = BLOCK_SAMPLE_ARRAYS.map((c) => `array_agg(f.${c})`).join(', ');
const OF_GONE = BLOCK_SAMPLE_ARRAYS.map((c) => `gone.${c}`).join(', ');
/**
 * The chosen groups' buckets as a range on `metric_blocks b` (implied by each join on the group):
 * without it the planner may join the groups to a scan of the whole table, and a statement costs
 * what the table holds, not what it merges.
 */
const IN_SPAN = 'AND b.bucket BETWEEN (SELECT first FROM span) AND (SELECT last FROM span)';

/**
 * `$1`: groups of buckets before it; `$2`: most groups; `$3`: whether to correct the loss map's
 * counts (the writer counts what it stores: `SLUICE_OUTCOMES`); `$4`: only groups whose unmerged
 * blocks all have a `seq` up to it (quiet since), or every group when null; `$5`, `$6`, `$7`:
 * only groups after this (bucket, app, name), the last one the call's statement before chose.
 */
const MERGE_GROUPS = `WITH g AS (
    SELECT bucket, app, name,
           count(*) > 1 AND sum(cardinality(id)) < count(*) * ${COMPACTED_BLOCK_SAMPLES} AS small
      FROM metric_blocks
     WHERE NOT merged AND bucket < $1 AND (bucket, app, name) > ($5::bigint, $6::text, $7::text)
     GROUP BY bucket, app, name
    HAVING $4::bigint IS NULL OR max(seq) <= $4::bigint
     ORDER BY bucket, app, name LIMIT $2),
  span AS (SELECT min(bucket) AS first, max(bucket) AS last FROM g),
  held AS (
    SELECT b.bucket, b.app, b.name, s.ts, s.id
      FROM g JOIN metric_blocks b ON b.bucket = g.bucket AND b.app = g.app AND b.name = g.name
     CROSS JOIN LATERAL unnest(b.ts, b.id) AS s(ts, id)
     WHERE NOT g.small ${IN_SPAN}),
  copied AS (
    SELECT DISTINCT bucket, app, name FROM held GROUP BY bucket, app, name, ts, id HAVING count(*) > 1),
  r AS (
    SELECT g.bucket, g.app, g.name FROM g
     WHERE g.small
        OR EXISTS (SELECT FROM copied c WHERE c.bucket = g.bucket AND c.app = g.app AND c.name = g.name)),
  -- The groups only marked, as a set: an anti join of g against r ran as a nested loop (g × r).
  kept AS (SELECT bucket, app, name FROM g EXCEPT ALL SELECT bucket, app, name FROM r),
  marked AS (
    UPDATE metric_blocks b SET merged = true FROM kept k
     WHERE b.bucket = k.bucket AND b.app = k.app AND b.name = k.name AND NOT b.merged ${IN_SPAN}
    RETURNING 1),
  gone AS (
    DELETE FROM metric_blocks b USING r
     WHERE b.bucket = r.bucket AND b.app = r.app AND b.name = r.name ${IN_SPAN}
    RETURNING b.*),
  copies AS (
    SELECT gone.bucket, gone.app, gone.name, gone.origin, s.*,
           row_number() OVER (PARTITION BY gone.bucket, gone.app, gone.name, s.ts, s.id
                              ORDER BY gone.seq, s.n) AS copy,
           (dense_rank() OVER (PARTITION BY gone.bucket, gone.app, gone.name ORDER BY s.ts, s.id) - 1)
             / ${MERGED_BLOCK_SAMPLES} AS part,
           min(gone.seq) OVER (PARTITION BY gone.bucket, gone.app, gone.name) AS first_seq
      FROM gone CROSS JOIN LATERAL unnest(${OF_GONE}) WITH ORDINALITY AS s(${ARRAYS}, n)),
  written AS (
    INSERT INTO metric_blocks (${BLOCK_COLUMNS}, seq, merged, origin)
    SELECT f.bucket, f.app, f.name, ${AGGREGATED}, min(f.first_seq), true, ''
      FROM (SELECT * FROM copies c WHERE c.copy = 1
             ORDER BY c.bucket, c.app, c.name, c.part, c.ts, c.id) f
     GROUP BY f.bucket, f.app, f.name, f.part
    RETURNING 1),
  dups AS (
    SELECT app, bucket AS minute, origin, count(*) AS n FROM copies WHERE copy > 1 GROUP BY 1, 2, 3),
  corrected AS (
    INSERT INTO event_outcomes (app, minute, type, outcome, reason, origin, count)
    SELECT app, minute, 'metric', 'stored', '', '', -sum(n) FROM dups WHERE $3 GROUP BY app, minute
    UNION ALL
    SELECT app, minute, 'metric', 'duplicate', 'duplicate', origin, n FROM dups WHERE $3
    RETURNING 1),
  last AS (SELECT bucket, app, name FROM g ORDER BY bucket DESC, app DESC, name DESC LIMIT 1)
  SELECT (SELECT count(*) FROM g)::int AS groups, (SELECT count(*) FROM r)::int AS rewritten,
         (SELECT count(*) FROM gone)::int AS blocks, (SELECT count(*) FROM written)::int AS written,
         (SELECT count(*) FROM marked)::int AS marked,
         (SELECT coalesce(sum(n), 0) FROM dups)::int AS duplicates,
         (SELECT count(*) FROM corrected)::int AS corrections,
         (SELECT bucket FROM last)::text AS last_bucket, (SELECT app FROM last) AS last_app,
         (SELECT name FROM last) AS last_name`;

interface MergeRow {
  readonly groups: number;
  readonly rewritten: number;
  readonly blocks: number;
  readonly marked: number;
  readonly written: number;
  readonly duplicates: number;
  /** The last group chosen (bigint as text), null when none was. */
  readonly last_bucket: string | null;
  readonly last_app: string | null;
  readonly last_name: string | null;
}

/** Before every group: the lowest bigint, then the empty text. */
const FIRST_KEY = ['-9223372036854775808', '', ''] as const;

/**
 * Merges (rewrites, or marks) the groups with an unmerged block whose bucket is before `limits.beforeMs` and (with
 * `limits.quietUpToSeq`) that got no block since, oldest first, `limits.groupsPerStatement` a
 * statement, until none is left or `limits.maxGroups` were merged; on the caller's transaction
 * (the job's run).
 */
export async function mergeMetricBlocks(
  client: pg.ClientBase,
  limits: BlockMergeLimits,
): Promise<BlockMerge> {
  // Read before any group is chosen: a block written after this is not quiet at the next run.
  const { rows: seqRows } = await client.query<{ seq: string }>(
    'SELECT last_value AS seq FROM metric_blocks_seq',
  );
  const total = {
    groups: 0,
    rewritten: 0,
    blocks: 0,
    marked: 0,
    written: 0,
    duplicates: 0,
    caughtUp: false,
    seqNow: Number(seqRows[0]?.seq ?? 0),
  };
  // Each statement starts after the last group the one before chose: the blocks it merged are
  // dead entries of `metric_blocks_unmerged` until a vacuum, and a statement starting from the
  // first group again walks every one of them, so the time per group grew with the backlog
  // (docs/metric-storage.md, "The merge over a backlog").
  let after: readonly [string, string, string] = FIRST_KEY;
  while (total.groups < limits.maxGroups) {
    const n = Math.min(limits.groupsPerStatement, limits.maxGroups - total.groups);
    const { rows } = await client.query<MergeRow>(MERGE_GROUPS, [
      limits.beforeMs,
      n,
      limits.correctCounts,
      limits.quietUpToSeq ?? null,
      ...after,
    ]);
    const r = rows[0];
    if (r !== undefined && r.last_bucket !== null && r.last_app !== null && r.last_name !== null)
      after = [r.last_bucket, r.last_app, r.last_name];
    total.groups += r?.groups ?? 0;
    total.rewritten += r?.rewritten ?? 0;
    total.blocks += r?.blocks ?? 0;
    total.marked += r?.marked ?? 0;
    total.written += r?.written ?? 0;
    total.duplicates += r?.duplicates ?? 0;
    if ((r?.groups ?? 0) < n) {
      total.caughtUp = true;
      break;
    }
  }
  return total;
}
