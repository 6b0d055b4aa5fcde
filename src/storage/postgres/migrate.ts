import type pg from 'pg';
import type { Clock } from '../../clock';
import type { Logger } from '../../log/logger';
import { STORAGE_LOCKS } from '../lock-keys';
import { lockInTransaction } from './advisory-lock';
import { MIGRATIONS } from './migrations';
import { withTransaction } from './pool';

/**
 * Applies pending migrations in one transaction under `pg_advisory_xact_lock`. A process that
 * waited for the lock finds the versions already recorded and applies nothing. The lock wait is
 * bounded by `statement_timeout`.
 */
export async function applyMigrations(pool: pg.Pool, clock: Clock, logger: Logger): Promise<void> {
  await withTransaction(pool, logger, async (client) => {
    await lockInTransaction(client, STORAGE_LOCKS.migrate);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL
    )`);
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    const applied = new Set(rows.map((r) => r.version));
    for (const m of MIGRATIONS) {
      if (applied.has(m.version)) continue;
      await client.query(m.sql);
      await client.query(
        'INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, to_timestamp($3::float8 / 1000))',
        [m.version, m.name, clock.now()],
      );
      logger.info({ version: m.version, migration: m.name }, 'applied PostgreSQL migration');
    }
  });
}
