import type pg from 'pg';
import type { Logger } from '../../log/logger';
import { deleteStatements, tallyDeleted, type DeleteDialect } from '../layout/delete-app-sql';
import type { AppDataDeletion, DeletedRows } from '../port';
import { withTransaction } from './pool';

/** The invalidation log has no key on PostgreSQL (see migrations/003): a repeated row is folded once. */
const PG_DELETE_DIALECT: DeleteDialect = {
  param: (n) => `$${n}`,
  logInvalidations: 'INSERT INTO metric_rollup_invalidations (name, app, bucket)',
};

/** `Storage.deleteAppData` on the writer's pool, in one transaction. */
export function deleteAppData(
  pool: pg.Pool,
  logger: Logger,
  deletion: AppDataDeletion,
): Promise<DeletedRows> {
  const statements = deleteStatements(deletion, PG_DELETE_DIALECT);
  return withTransaction(pool, logger, async (client) => {
    const counts: number[] = [];
    for (const s of statements) counts.push((await client.query(s.sql, [...s.params])).rowCount ?? 0);
    return tallyDeleted(statements, counts);
  });
}
