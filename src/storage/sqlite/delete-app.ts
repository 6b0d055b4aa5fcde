import type Database from 'better-sqlite3';
import { deleteStatements, tallyDeleted, type DeleteDialect } from '../layout/delete-app-sql';
import type { AppDataDeletion, DeletedRows } from '../port';

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
  const counts = db.transaction(() =>
    statements.map((s) => {
      const named = Object.fromEntries(s.params.map((v, i) => [`p${i + 1}`, v]));
      return prepare(s.sql).run(named).changes;
    }),
  )();
  return tallyDeleted(statements, counts);
}
