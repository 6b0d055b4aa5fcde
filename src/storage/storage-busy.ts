/**
 * A read refused because storage is saturated: every read connection stayed busy for the whole
 * bounded wait, the read ran past its statement timeout, or ingest kept precedence for longer than
 * the read could wait. The writer is not affected (it has its own connections); the client should
 * retry later. Mapped to `503 storage_busy` with `Retry-After`.
 */
export class StorageBusyError extends Error {
  constructor(
    /**
     * `pool_full` (no read connection freed in time), `timeout` (the read ran too long) or
     * `ingest_first` (the writer was busy and the read's turn did not come in time).
     */
    readonly reason: 'pool_full' | 'timeout' | 'ingest_first',
    message: string,
  ) {
    super(message);
    this.name = 'StorageBusyError';
  }
}
