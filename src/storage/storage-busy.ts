/**
 * A read refused because storage is saturated with other reads: every read connection stayed
 * busy for the whole bounded wait, or the read ran past its statement timeout. The writer is not
 * affected (it has its own connections); the client should retry later. Mapped to
 * `503 storage_busy` with `Retry-After`.
 */
export class StorageBusyError extends Error {
  constructor(
    /** `pool_full` (no read connection freed in time) or `timeout` (the read ran too long). */
    readonly reason: 'pool_full' | 'timeout',
    message: string,
  ) {
    super(message);
    this.name = 'StorageBusyError';
  }
}
