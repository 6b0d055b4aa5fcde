import {
  DatabaseMissingError,
  ensureDatabase as ensurePostgresDatabase,
} from '../storage/postgres/ensure-database';

const CONNECT_TIMEOUT_MS = 5000;

/**
 * Creates the database of `url` when it does not exist yet, so `sluice cluster` works on a fresh
 * local PostgreSQL. Collectors apply the migrations themselves, one at a time under an advisory
 * lock. An unreachable server is reported with how to start a local one.
 */
export async function ensureDatabase(url: string): Promise<'existed' | 'created'> {
  try {
    return await ensurePostgresDatabase(url, CONNECT_TIMEOUT_MS);
  } catch (err) {
    if (err instanceof DatabaseMissingError) throw err;
    throw new Error(
      `cannot reach PostgreSQL at ${new URL(url).host} (${(err as Error).message}). Start it ` +
        '(pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start) ' +
        'or set SLUICE_DATABASE_URL.',
      { cause: err },
    );
  }
}
