import type Database from 'better-sqlite3';
import type { Logger } from '../../log/logger';
import { SQLITE_MIGRATIONS } from './migrations';

/**
 * Applies pending migrations in one `BEGIN IMMEDIATE` transaction: it takes the write lock before
 * reading `user_version`, so two processes opening the same file cannot both apply a step.
 */
export function applySqliteMigrations(db: Database.Database, logger: Logger): void {
  db.transaction(() => {
    const current = db.pragma('user_version', { simple: true }) as number;
    for (const m of SQLITE_MIGRATIONS) {
      if (m.version <= current) continue;
      db.exec(m.sql);
      // PRAGMA takes no bind parameters; the version is an integer constant of this module.
      db.pragma(`user_version = ${Math.trunc(m.version)}`);
      logger.info({ version: m.version }, 'applied SQLite migration');
    }
  }).immediate();
}
