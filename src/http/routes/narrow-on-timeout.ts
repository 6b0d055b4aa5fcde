import { StorageBusyError } from '../../storage/storage-busy';

/** A window the reader can shorten: every read route's first way to narrow. */
export const NARROW_WINDOW = 'a shorter window (`from`, `to`)';

/**
 * Runs a route's reads; one that ran past its statement timeout (`SLUICE_PG_READ_TIMEOUT_MS`) is
 * refused with the ways to narrow it appended to its message (`503 storage_busy`): a read that
 * timed out once will time out again as asked, however long the reader waits.
 */
export async function narrowOnTimeout<T>(ways: readonly string[], read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (!(err instanceof StorageBusyError) || err.reason !== 'timeout') throw err;
    throw new StorageBusyError('timeout', `${err.message} Narrow the read: ${ways.join(', ')}.`);
  }
}
