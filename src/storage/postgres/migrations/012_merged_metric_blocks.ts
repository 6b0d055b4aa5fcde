/**
 * No key row per metric sample (docs/metric-storage.md, "No key row per sample"). The writer
 * COPYs blocks only; a resent sample lands in a block of its own (app, name, minute) group, and
 * reads merge the group's blocks, keeping per (app, name, bucket, ts, id) the sample of the
 * block written first:
 *
 * - `seq`: one value of `metric_blocks_seq` per block, the order blocks were written in. The
 *   blocks already stored get 0: they are free of duplicates (the key table refused every resent
 *   sample), so their order among themselves never decides anything, and adding the column with a
 *   constant default rewrites no stored row.
 * - `merged`: the block is one of the blocks the rewrite job made of a group's distinct samples.
 *   A group whose blocks are all merged holds no duplicate and is read as it is; one with an
 *   unmerged block (written since) is read through the merge. The stored blocks are merged.
 * - `origin`: the loss map's origin of the requests whose samples the block holds (the writer
 *   makes a block per origin): a duplicate the job removes is counted under its copy's origin.
 * - `metric_blocks_unmerged`: the unmerged blocks by group and `seq`, for the readers' checks and
 *   the job; only the blocks of the last minutes are in it.
 *
 * The views keep their columns and stay one scan of the blocks, as readers bound and order it (by
 * `bucket`, then each minute's samples sorted): a block yields its samples as they are when its
 * group has no unmerged block (the cheap path: every group the job has passed, one index probe of
 * `metric_blocks_unmerged`); in a group with one, the unmerged block of the lowest `seq` yields
 * the whole group merged, one sample per (ts, id) by `DISTINCT ON` ordered by `seq` (then the
 * sample's place in its block), and the group's other blocks yield nothing. Conditions on `ts` and
 * `id` reach the `DISTINCT ON`'s columns, so the merge sorts only the group's samples that pass.
 *
 * `metric_sample_keys` is dropped here, with its partitions: nothing reads it once the views
 * merge, and keeping it would keep its partitions, purge and delete statements for no reader.
 */
/** Whether block `b`'s group holds an unmerged block (of a lower `seq` than `b`'s, with `below`). */
function groupHasUnmerged(below: boolean): string {
  return `EXISTS (SELECT FROM metric_blocks o
     WHERE o.bucket = b.bucket AND o.app = b.app AND o.name = b.name AND NOT o.merged${below ? ' AND o.seq < b.seq' : ''})`;
}

/** A view of the blocks' samples with `id, ts, app, name`, then `columns`, then `bucket`, merged. */
function mergingView(view: string, columns: readonly string[]): string {
  const arrays = ['id', 'ts', ...columns];
  const list = arrays.join(', ');
  return `CREATE VIEW ${view} AS
SELECT s.id, s.ts, b.app, b.name, ${columns.map((c) => `s.${c}`).join(', ')}, b.bucket
  FROM metric_blocks b
 CROSS JOIN LATERAL (
   SELECT ${list} FROM unnest(${arrays.map((c) => `b.${c}`).join(', ')}) AS u(${list})
    WHERE b.merged AND NOT ${groupHasUnmerged(false)}
   UNION ALL
   SELECT ${list} FROM (
     SELECT DISTINCT ON (u.ts, u.id) ${arrays.map((c) => `u.${c}`).join(', ')}
       FROM metric_blocks m
      CROSS JOIN LATERAL unnest(${arrays.map((c) => `m.${c}`).join(', ')}) WITH ORDINALITY AS u(${list}, n)
      WHERE NOT b.merged AND NOT ${groupHasUnmerged(true)}
        AND m.bucket = b.bucket AND m.app = b.app AND m.name = b.name
      ORDER BY u.ts, u.id, m.seq, u.n) d
 ) s;`;
}

export const sql = `
CREATE SEQUENCE metric_blocks_seq;
ALTER TABLE metric_blocks ADD COLUMN seq bigint NOT NULL DEFAULT 0;
ALTER TABLE metric_blocks ALTER COLUMN seq SET DEFAULT nextval('metric_blocks_seq');
ALTER TABLE metric_blocks ADD COLUMN merged boolean NOT NULL DEFAULT true;
ALTER TABLE metric_blocks ALTER COLUMN merged SET DEFAULT false;
ALTER TABLE metric_blocks ADD COLUMN origin text NOT NULL DEFAULT '';
CREATE INDEX metric_blocks_unmerged ON metric_blocks (bucket, app, name, seq) WHERE NOT merged;

DROP VIEW metric_samples;
DROP VIEW metric_sample_values;
${mergingView('metric_samples', [
  'version',
  'env',
  'value',
  'count',
  'min',
  'max',
  'sum',
  'message',
  'attributes',
])}
${mergingView('metric_sample_values', ['value', 'count', 'min', 'max', 'sum'])}
DROP TABLE metric_sample_keys;
`;
