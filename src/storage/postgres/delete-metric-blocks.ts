import type { DeleteStatement, SampleDeletes } from '../layout/delete-app-sql';
import { floorTo, ROLLUP_WIDTH_MS } from '../layout/rollups';
import { BLOCK_SAMPLE_ARRAYS } from './metric-block-columns';

/*
 * `Storage.deleteAppData`'s metric samples on PostgreSQL, stored as blocks (migration 009): a
 * sample is in a block if and only if its `(ts, id)` is in `metric_sample_keys`, so every
 * statement here removes samples from their blocks and their keys together, in one statement
 * (one snapshot: a block committed meanwhile is either seen whole with its keys or not at all). A
 * block left without samples is deleted, never kept empty. Each statement's row count is the keys
 * it deleted: the samples, not the blocks.
 */

const MINUTE_MS = ROLLUP_WIDTH_MS['1m'];

/** Deletes the blocks matching `condition` and the keys of all their samples. */
function deleteBlocksSql(condition: string): string {
  return `WITH gone AS (DELETE FROM metric_blocks WHERE ${condition} RETURNING id, ts)
    DELETE FROM metric_sample_keys k
     USING (SELECT unnest(id) AS id, unnest(ts) AS ts FROM gone) g
     WHERE k.ts = g.ts AND k.id = g.id`;
}

/**
 * Removes the samples matching `sample` (on `s.id`, `s.ts`) from the blocks `b` matching `blocks`,
 * which must hold at least one: their keys are deleted; a block left with samples has every
 * array rebuilt from its kept elements, in their order; a block left with none is deleted. Blocks
 * are found by `(tableoid, ctid)`: a block is changed in place only here, and `deleteAppData`
 * runs one at a time (the fold lock), so the row found is the row changed; one the purge deletes
 * meanwhile is skipped, its keys with it.
 */
function removeSamplesSql(blocks: string, sample: string): string {
  const arrays = BLOCK_SAMPLE_ARRAYS.join(', ');
  const ofBlock = BLOCK_SAMPLE_ARRAYS.map((c) => `b.${c}`).join(', ');
  const kept = BLOCK_SAMPLE_ARRAYS.map((c) => `array_agg(s.${c} ORDER BY s.n)`).join(', ');
  return `WITH hit AS (
      SELECT b.tableoid AS part, b.ctid AS tid, b.id, b.ts,
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
    DELETE FROM metric_sample_keys k
     USING (SELECT s.id, s.ts FROM hit CROSS JOIN LATERAL unnest(hit.id, hit.ts) s(id, ts)
             WHERE ${sample}) g
     WHERE k.ts = g.ts AND k.id = g.id`;
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
      return [{ sql: deleteBlocksSql(`app = ${p(1)}`), params: [d.app], counts: 'metricSamples' }];
    }
    if (d.scope === 'before') {
      const minute = floorTo(d.before, MINUTE_MS);
      const statements: DeleteStatement[] = [
        {
          sql: deleteBlocksSql(`app = ${p(1)} AND bucket < ${p(2)}`),
          params: [d.app, minute],
          counts: 'metricSamples',
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
        });
      }
      return statements;
    }
    return [
      {
        sql: removeSamplesSql(`b.app = ${p(1)} AND ${p(2)} = ANY (b.id)`, `s.id = ${p(2)}`),
        params: [d.app, d.id],
        counts: 'metricSamples',
      },
    ];
  },
};
