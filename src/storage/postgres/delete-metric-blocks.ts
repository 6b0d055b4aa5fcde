import type { DeleteStatement, SampleDeletes } from '../layout/delete-app-sql';
import { floorTo, ROLLUP_WIDTH_MS } from '../layout/rollups';
import { BLOCK_SAMPLE_ARRAYS } from './metric-block-columns';

/*
 * `Storage.deleteAppData`'s metric samples on PostgreSQL, stored as blocks (migrations 009, 012):
 * every statement here removes samples from their blocks, every copy of each (a resent sample not
 * merged yet is in two blocks of its group), in one statement. A block left without samples is
 * deleted, never kept empty. Each statement's one row holds `n`, the samples it deleted, each
 * counted once as reads see it (`DeleteStatement.countedIn`), not the blocks.
 */

const MINUTE_MS = ROLLUP_WIDTH_MS['1m'];

/**
 * `n`: the distinct samples of `gone` (rows of blocks with `bucket, app, name, merged, id, ts`):
 * a group with no unmerged block holds no duplicate, so its blocks' lengths are summed; the
 * others' samples are counted distinct.
 */
function distinctSamplesOf(gone: string): string {
  return `dirty AS (SELECT DISTINCT bucket, app, name FROM ${gone} WHERE NOT merged)
    SELECT (SELECT coalesce(sum(cardinality(g.id)), 0) FROM ${gone} g
             WHERE NOT EXISTS (SELECT FROM dirty d WHERE d.bucket = g.bucket AND d.app = g.app AND d.name = g.name))
         + (SELECT count(*) FROM (
             SELECT DISTINCT g.bucket, g.app, g.name, s.ts, s.id
               FROM ${gone} g JOIN dirty d ON d.bucket = g.bucket AND d.app = g.app AND d.name = g.name
              CROSS JOIN LATERAL unnest(g.id, g.ts) s(id, ts)) x) AS n`;
}

/** Deletes the blocks matching `condition`; whole groups, since conditions are on app and bucket. */
function deleteBlocksSql(condition: string): string {
  return `WITH gone AS (
      DELETE FROM metric_blocks WHERE ${condition} RETURNING bucket, app, name, merged, id, ts),
    ${distinctSamplesOf('gone')}`;
}

/**
 * Removes the samples matching `sample` (on `s.id`, `s.ts`) from the blocks `b` matching `blocks`,
 * which must hold at least one: a block left with samples has every array rebuilt from its kept
 * elements, in their order; a block left with none is deleted. Blocks are found by
 * `(tableoid, ctid)`: `deleteAppData` runs one at a time (the fold lock) in REPEATABLE READ, so a
 * block the rewrite job replaced meanwhile fails the statement (a serialization failure, and the
 * deletion starts again); one the purge deletes meanwhile is skipped.
 */
function removeSamplesSql(blocks: string, sample: string): string {
  const arrays = BLOCK_SAMPLE_ARRAYS.join(', ');
  const ofBlock = BLOCK_SAMPLE_ARRAYS.map((c) => `b.${c}`).join(', ');
  const kept = BLOCK_SAMPLE_ARRAYS.map((c) => `array_agg(s.${c} ORDER BY s.n)`).join(', ');
  return `WITH hit AS (
      SELECT b.tableoid AS part, b.ctid AS tid, b.bucket, b.app, b.name, b.merged, b.id, b.ts,
             EXISTS (SELECT FROM unnest(b.id, b.ts) s(id, ts) WHERE NOT (${sample})) AS keeps
        FROM metric_blocks b WHERE ${blocks}
    ), emptied AS (
      DELETE FROM metric_blocks b USING hit
       WHERE b.tableoid = hit.part AND b.ctid = hit.tid AND NOT hit.keeps
    ), rewritten AS (
      UPDATE metric_blocks b SET (${arrays}) = (
        SELECT ${kept}
          FROM unnest(${ofBlock}) WITH ORDINALITY s(${arrays}, n)
         WHERE NOT (${sample}))
        FROM hit WHERE b.tableoid = hit.part AND b.ctid = hit.tid AND hit.keeps
    )
    SELECT count(*) AS n FROM (
      SELECT DISTINCT hit.bucket, hit.app, hit.name, s.ts, s.id
        FROM hit CROSS JOIN LATERAL unnest(hit.id, hit.ts) s(id, ts) WHERE ${sample}) g`;
}

/**
 * Samples as blocks plus keys, in `Storage.deleteAppData`'s statements. An app's samples older than
 * `before`: its blocks of earlier minutes go whole; when `before` is inside a minute, that minute's
 * blocks lose their samples older than it. A sample by id is found in the app's blocks by a scan,
 * as the rows were (no index leads with the id).
 */
export const BLOCK_SAMPLES: SampleDeletes = {
  withId: (p) =>
    `SELECT b.name, s.ts FROM metric_blocks b CROSS JOIN LATERAL unnest(b.id, b.ts) s(id, ts)
      WHERE b.app = ${p(1)} AND ${p(2)} = ANY (b.id) AND s.id = ${p(2)}`,
  // A block's samples are in its minute: from the hour `p(3)` on, and some before `p(4)`.
  seriesBetween: (p) =>
    `SELECT name FROM metric_blocks
      WHERE app = ${p(1)} AND bucket >= ${p(3)} AND bucket < ${p(4)} AND ${p(4)} > ANY (ts)`,
  statements(d, p): DeleteStatement[] {
    if (d.scope === 'all') {
      return [
        { sql: deleteBlocksSql(`app = ${p(1)}`), params: [d.app], counts: 'metricSamples', countedIn: 'n' },
      ];
    }
    if (d.scope === 'before') {
      const minute = floorTo(d.before, MINUTE_MS);
      const statements: DeleteStatement[] = [
        {
          sql: deleteBlocksSql(`app = ${p(1)} AND bucket < ${p(2)}`),
          params: [d.app, minute],
          counts: 'metricSamples',
          countedIn: 'n',
        },
      ];
      if (minute !== d.before) {
        statements.push({
          sql: removeSamplesSql(
            `b.app = ${p(1)} AND b.bucket = ${p(3)} AND ${p(2)} > ANY (b.ts)`,
            `s.ts < ${p(2)}`,
          ),
          params: [d.app, d.before, minute],
          counts: 'metricSamples',
          countedIn: 'n',
        });
      }
      return statements;
    }
    return [
      {
        sql: removeSamplesSql(`b.app = ${p(1)} AND ${p(2)} = ANY (b.id)`, `s.id = ${p(2)}`),
        params: [d.app, d.id],
        counts: 'metricSamples',
        countedIn: 'n',
      },
    ];
  },
};
