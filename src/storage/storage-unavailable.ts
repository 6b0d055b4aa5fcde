/**
 * A read that failed because storage cannot serve it now: the database is unreachable, stopped,
 * paused past a timeout, restarting, out of disk, or (SQLite) the file is locked, unreadable or
 * closed. Not a fault of the query: the client should retry later. Mapped to
 * `503 storage_unavailable` with `Retry-After`; `cause` keeps the driver's error for the log.
 */
export class StorageUnavailableError extends Error {
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.name = 'StorageUnavailableError';
  }
}
