import pg from 'pg';
import type { BenchContext } from '../context';
import { mergeUntilCaughtUp } from '../merged-blocks';
import { bounded, figure, round } from '../rows';
import type { BenchRow } from '../types';

const SUITE = 'merge-backlog';
/** A backlog's groups: 50 a minute (5 apps × 10 names), from this minute on. */
const FIRST_MINUTE_MS = 1_796_600_040_000;
const GROUPS_PER_MINUTE = 50;
/** Samples of each synthetic block: the two-element arrays `fillBacklog` writes. */
const BLOCK_SAMPLES = 2;

/** Two kinds of group the job meets: one block (marked merged as it is), two small ones (rewritten). */
const KINDS = [
  { name: 'one block a group (marked merged)', blocks: 1 },
  { name: 'two small blocks a group (rewritten)', blocks: 2 },
] as const;

/**
 * Writes `groups` groups of unmerged blocks, `blocks` each, straight into the store (as a writer
 * would have left them: 2 samples a block, an id and ts each), then VACUUM ANALYZE.
 */
async function fillBacklog(client: pg.Client, groups: number, blocks: number): Promise<void> {
  for (let b = 0; b < blocks; b++) {
    await client.query(
      `INSERT INTO metric_blocks (bucket, app, name, id, ts, version, env, value, count, min, max, sum, message, attributes)
       SELECT m, 'app-' || (g % 5), 'name.' || ((g / 5) % 10),
              ARRAY[gen_random_uuid(), gen_random_uuid()], ARRAY[m + 2 * $3 + 1, m + 2 * $3 + 2]::bigint[],
              ARRAY['', ''], ARRAY['', ''], ARRAY[1.5, 2.5]::float8[], ARRAY[NULL, NULL]::bigint[],
              ARRAY[NULL, NULL]::float8[], ARRAY[NULL, NULL]::float8[], ARRAY[NULL, NULL]::float8[],
              ARRAY['', ''], ARRAY['{}', '{}']
         FROM generate_series(0, $1::int - 1) g,
              LATERAL (SELECT $2::bigint + (g / ${GROUPS_PER_MINUTE}) * 60000 AS m) minute`,
      [groups, FIRST_MINUTE_MS, b],
    );
  }
  await client.query('VACUUM ANALYZE metric_blocks');
}

/** Merges the whole backlog as the job does, run after run; answers the time it took (ms). */
async function mergeBacklog(client: pg.Client, groups: number): Promise<number> {
  const t0 = performance.now();
  const merged = await mergeUntilCaughtUp(client);
  if (merged !== groups) throw new Error(`merge-backlog: merged ${merged} of ${groups} groups`);
  return performance.now() - t0;
}

/** One backlog in a fresh database: ms of the merge per 1,000 groups. */
async function measure(ctx: BenchContext, groups: number, blocks: number): Promise<number> {
  const db = await ctx.databases.fresh('merge_backlog');
  const client = new pg.Client({ connectionString: db.url, application_name: 'sluice-bench-merge' });
  await client.connect();
  try {
    await fillBacklog(client, groups, blocks);
    return ((await mergeBacklog(client, groups)) / groups) * 1000;
  } finally {
    await client.end();
    await ctx.databases.drop(db);
  }
}

/**
 * The `merge_metric_blocks` job's statement over a backlog of unmerged groups (after an outage, a
 * replay, a bulk load), run after run with the job's defaults until none is left: the time per
 * group at a backlog 10 times larger should be the same, not 10 times longer. Wall time of the one
 * backend on an otherwise idle database.
 */
export async function runMergeBacklog(ctx: BenchContext): Promise<BenchRow[]> {
  const small = ctx.options.quick ? 2_000 : 20_000;
  const large = small * 10;
  const rows: BenchRow[] = [];
  for (const kind of KINDS) {
    ctx.progress(`merge-backlog: ${kind.name}, ${small} groups`);
    const base = await measure(ctx, small, kind.blocks);
    ctx.progress(`merge-backlog: ${kind.name}, ${large} groups`);
    const big = await measure(ctx, large, kind.blocks);
    const smallName = `merge of ${small.toLocaleString('en-US')} groups, ${kind.name}`;
    rows.push(
      figure(SUITE, smallName, round(base), 'ms per 1,000 groups', { samples_per_block: BLOCK_SAMPLES }),
      {
        ...bounded(
          SUITE,
          `merge of ${large.toLocaleString('en-US')} groups, ${kind.name}`,
          round(big),
          'ms per 1,000 groups',
          'ratio ≤ 1.5',
          big / base <= 1.5,
          { samples_per_block: BLOCK_SAMPLES },
        ),
        baseline: smallName,
        ratio: round(big / base),
      },
    );
  }
  return rows;
}
