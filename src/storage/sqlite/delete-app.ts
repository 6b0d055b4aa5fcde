import type Database from 'better-sqlite3';
import { deleteStatements, tallyDeleted, type DeleteDialect } from '../layout/delete-app-sql';
import type { AppDataDeletion, DeletedRows } from '../port';
import { outcomeDeletion, pendingCarriedOver } from '../layout/delete-outcomes';
import { outcomeRowOf, type OutcomeSumRow } from '../layout/outcome-rows';
import { insertCounts } from './outcomes';

const SQLITE_DELETE_DIALECT: DeleteDialect = {
  param: (n) => `$p${n}`,
  logInvalidations: 'INSERT OR IGNORE INTO metric_rollup_invalidations (name, app, bucket)',
};

/** `Storage.deleteAppData` on SQLite, in one transaction. */
export function deleteAppData(
  db: Database.Database,
  prepare: (sql: string) => Database.Statement,
  deletion: AppDataDeletion,
): DeletedRows {
  const statements = deleteStatements(deletion, SQLITE_DELETE_DIALECT);
  const outcomes = outcomeDeletion(deletion, SQLITE_DELETE_DIALECT.param);
  const named = (params: readonly (string | number)[]) =>
    Object.fromEntries(params.map((v, i) => [`p${i + 1}`, v]));
  // One write transaction: SQLite's writers take turns, so its statements see one state.
  const { changes, lossMapRows } = db.transaction(() => {
    const changes = statements.map((s) => prepare(s.sql).run(named(s.params)).changes);
    if (outcomes === null) return { changes, lossMapRows: 0 };
    const sums = prepare(outcomes.sumsSql).all(named(outcomes.params)) as OutcomeSumRow[];
    const removed = prepare(outcomes.deleteSql).run(named(outcomes.params)).changes;
    insertCounts(prepare, pendingCarriedOver(deletion.app, sums.map(outcomeRowOf)));
    return { changes, lossMapRows: removed };
  })();
  return tallyDeleted(statements, changes, lossMapRows);
}
