import Database from 'better-sqlite3';
import { errorText } from '../maintenance';
import { StorageUnavailableError } from '../storage-unavailable';

/** Result codes of a query's own fault (SQL error, type mismatch, bad binding): a bug, thrown as is. */
const QUERY_FAULTS = new Set(['SQLITE_ERROR', 'SQLITE_MISMATCH', 'SQLITE_RANGE']);

/**
 * Runs one read; a failure of the file rather than of the query (locked past the busy timeout,
 * I/O error, disk full, corrupt, or the connection closed by shutdown) becomes
 * `StorageUnavailableError` (503 with Retry-After).
 */
export async function readOrUnavailable<T>(query: () => T | Promise<T>): Promise<T> {
  try {
    return await query();
  } catch (err) {
    if (!isUnavailable(err)) throw err;
    throw new StorageUnavailableError(`SQLite cannot serve reads now: ${errorText(err)}`, { cause: err });
  }
}

function isUnavailable(err: unknown): boolean {
  if (err instanceof Database.SqliteError) return !QUERY_FAULTS.has(err.code);
  return err instanceof TypeError && /database connection is not open/.test(err.message);
}
