/**
 * Brings a bench data set to the state the `merge_metric_blocks` job keeps a store in: every
 * metric block group merged. The suites fill their databases as the writer stores (unmerged
 * blocks), and the `reads` suite's kept database gathers each run's ingest rows; left so, the
 * suite's collector would rewrite tens of thousands of groups under the readers, and every view
 * would read them through the merge. Runs the job's own statement to completion, then
 * `VACUUM ANALYZE metric_blocks`.
 */
import pg from 'pg';
import { mergeMetricBlocks } from '../../src/storage/postgres/metric-block-merge';

/** The merge job's defaults (src/scheduler/jobs/merge-metric-blocks.ts). */
const GROUPS_PER_STATEMENT = 500;
const GROUPS_PER_TRANSACTION = 20_000;
/** Count bound: 20 million groups, far beyond a 50 M data set's (one per app, name and minute). */
const MAX_TRANSACTIONS = 1_000;

/**
 * Runs the merge job's statement on `client` as the job's runs do, a transaction of up to 20,000
 * groups after another, until no group is left; answers the groups merged.
 */
export async function mergeUntilCaughtUp(client: pg.ClientBase): Promise<number> {
  let groups = 0;
  for (let round = 0; round < MAX_TRANSACTIONS; round++) {
    await client.query('BEGIN');
    const r = await mergeMetricBlocks(client, {
      beforeMs: Number.MAX_SAFE_INTEGER,
      groupsPerStatement: GROUPS_PER_STATEMENT,
      maxGroups: GROUPS_PER_TRANSACTION,
      correctCounts: true,
    });
    await client.query('COMMIT');
    groups += r.groups;
    if (r.caughtUp) break;
  }
  return groups;
}

/** Merges every unmerged group of the database at `url`; resolves to the groups it rewrote. */
export async function mergeAllBlocks(url: string, progress: (message: string) => void): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ any: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM metric_blocks WHERE NOT merged) AS any',
    );
    if (rows[0]?.any !== true) return 0;
    const t0 = performance.now();
    const groups = await mergeUntilCaughtUp(client);
    await client.query('VACUUM ANALYZE metric_blocks');
    progress(`merged ${groups} metric block groups in ${Math.round((performance.now() - t0) / 1000)} s`);
    return groups;
  } finally {
    await client.end();
  }
}
