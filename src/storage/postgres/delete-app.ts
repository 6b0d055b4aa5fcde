import type pg from 'pg';
import type { Logger } from '../../log/logger';
import {
  deleteStatements,
  tallyDeleted,
  type DeleteDialect,
  type DeleteStatement,
} from '../layout/delete-app-sql';
import type { AppDataDeletion, DeletedRows } from '../port';
import { jobLockName } from '../lock-keys';
import { lockInTransaction } from './advisory-lock';
import { BLOCK_SAMPLES } from './delete-metric-blocks';
import { outcomeDeletion, pendingCarriedOver } from '../layout/delete-outcomes';
import { outcomeRowOf, type OutcomeSumRow } from '../layout/outcome-rows';
import { insertCounts } from './outcomes';
import { withClient } from './pool';

/**
 * The invalidation log has no key on PostgreSQL (see migrations/003): a repeated row is folded
 * once. Metric samples are blocks, merged on read (migrations 009, 012).
 */
const PG_DELETE_DIALECT: DeleteDialect = {
  param: (n) => `$${n}`,
  logInvalidations: 'INSERT INTO metric_rollup_invalidations (name, app, bucket)',
  samples: BLOCK_SAMPLES,
};

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

/**
 * The app's error groups (migration 011) go with its errors: all of them, those of the minutes
 * and hours wholly before `before` (the minute holding it is logged and refolded from what is
 * left, and its hour with it), or,
 * for one event, its minute is logged before the event goes, and refolded at the next run.
 */
function errorGroupStatements(d: AppDataDeletion): { first: DeleteStatement[]; last: DeleteStatement[] } {
  if (d.scope === 'all') {
    return {
      first: [],
      last: [
        { sql: 'DELETE FROM error_groups_1m WHERE app = $1', params: [d.app] },
        { sql: 'DELETE FROM error_groups_1h WHERE app = $1', params: [d.app] },
        { sql: 'DELETE FROM error_group_invalidations WHERE app = $1', params: [d.app] },
      ],
    };
  }
  if (d.scope === 'before') {
    const minute = d.before - (d.before % MINUTE_MS);
    const hour = d.before - (d.before % HOUR_MS);
    const last: DeleteStatement[] = [
      { sql: 'DELETE FROM error_groups_1m WHERE app = $1 AND minute < $2', params: [d.app, minute] },
      { sql: 'DELETE FROM error_groups_1h WHERE app = $1 AND hour < $2', params: [d.app, hour] },
      {
        sql: 'DELETE FROM error_group_invalidations WHERE app = $1 AND minute < $2',
        params: [d.app, minute],
      },
    ];
    // The hour holding `before` (and its minute) keeps data from it on: refolded from what is left.
    if (d.before !== hour) {
      last.push({
        sql: 'INSERT INTO error_group_invalidations (app, minute) VALUES ($1, $2)',
        params: [d.app, minute],
      });
    }
    return { first: [], last };
  }
  return {
    first: [
      {
        sql: `INSERT INTO error_group_invalidations (app, minute)
              SELECT app, ts - ts % 60000 FROM events WHERE app = $1 AND id = $2 AND type = 'error'`,
        params: [d.app, d.id],
      },
    ],
    last: [],
  };
}

/**
 * The partitioned tables the statements change, locked up front in the order the writer takes
 * them (blocks, events; see partitions.ts), whatever order the statements run in: the
 * purge drops expired partitions in that order in one transaction, and a delete holding `events`
 * while waiting for the blocks would deadlock with it.
 */
const LOCK_TABLES = 'LOCK TABLE metric_blocks, events IN ROW EXCLUSIVE MODE';

/**
 * The downsample job's lock. A fold that read the app's samples before the delete committed
 * would write its rollups back afterwards, with nothing left in the invalidation log to correct
 * them: the delete waits for a running fold, and a fold starting meanwhile finds the lock busy and
 * leaves its window to the next run.
 */
const ROLLUP_FOLD_LOCK = jobLockName('downsample');

/**
 * The loss-map compaction's lock, for the same reason: a compaction that removed the app's rows
 * before the delete committed writes their sums back as new rows, which the delete's snapshot
 * does not see. Taken after the fold's lock; the compaction takes no other lock, so the two
 * never wait on each other in a cycle.
 */
const OUTCOME_COMPACTION_LOCK = jobLockName('compact_outcomes');

/** SQLSTATE of a REPEATABLE READ transaction that met a row changed after its snapshot. */
const SERIALIZATION_FAILURE = '40001';
/** Attempts at the deletion when it meets such a row (a job that held the lock it waited for). */
const MAX_ATTEMPTS = 5;

/**
 * `Storage.deleteAppData` on the writer's pool, in one REPEATABLE READ transaction (every
 * statement on one snapshot: see layout/delete-app-sql.ts), serialised with the rollup fold and
 * the loss-map compaction. The snapshot is claimed by the first statement, the lock's, before it
 * waits: a job that held the lock has changed rows since, and the statement that meets one fails
 * with a serialization failure; the deletion then starts again on a new snapshot, after the job.
 */
export async function deleteAppData(
  pool: pg.Pool,
  logger: Logger,
  deletion: AppDataDeletion,
): Promise<DeletedRows> {
  const groups = errorGroupStatements(deletion);
  const statements = [...groups.first, ...deleteStatements(deletion, PG_DELETE_DIALECT), ...groups.last];
  const outcomes = outcomeDeletion(deletion, PG_DELETE_DIALECT.param);
  for (let attempt = 1; ; attempt++) {
    try {
      return await withClient(pool, logger, async (client) => {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
        await lockInTransaction(client, ROLLUP_FOLD_LOCK);
        await lockInTransaction(client, OUTCOME_COMPACTION_LOCK);
        await client.query(LOCK_TABLES);
        const counts: number[] = [];
        for (const s of statements) {
          const result = await client.query<Record<string, unknown>>(s.sql, [...s.params]);
          counts.push(
            s.countedIn === undefined ? (result.rowCount ?? 0) : Number(result.rows[0]?.[s.countedIn] ?? 0),
          );
        }
        let lossMapRows = 0;
        if (outcomes !== null) {
          const sums = await client.query<OutcomeSumRow>(outcomes.sumsSql, [...outcomes.params]);
          lossMapRows = (await client.query(outcomes.deleteSql, [...outcomes.params])).rowCount ?? 0;
          await insertCounts(client, pendingCarriedOver(deletion.app, sums.rows.map(outcomeRowOf)));
        }
        await client.query('COMMIT');
        return tallyDeleted(statements, counts, lossMapRows);
      });
    } catch (err) {
      if ((err as { code?: string }).code !== SERIALIZATION_FAILURE || attempt === MAX_ATTEMPTS) throw err;
      logger.info({ attempt }, 'app deletion met rows a job changed meanwhile; starting again');
    }
  }
}
