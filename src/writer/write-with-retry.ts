import type { Logger } from '../log/logger';
import type { Metrics } from '../metrics/instruments';
import type { StorageRow, WriteResult } from '../storage/port';
import { isPermanentWriteError } from '../storage/write-errors';
import { backoffDelay, type BackoffOptions } from './backoff';
import type { LaneName } from '../intake/event-sink';
import type { OutcomeOrigin } from '../loss-map/outcome';

/** One row to write, with the lane it came through (for the stored-events counter). */
export interface WritableItem {
  readonly row: StorageRow;
  readonly lane: LaneName;
  /** The loss map's origin of the request that brought it, where the caller knows it. */
  readonly origin?: OutcomeOrigin;
}

/** What a writer tells about its transactions: readiness follows them (lifecycle/readiness.ts). */
export interface WriteHealth {
  /** A write committed. */
  succeeded(): void;
  /** A write failed for a reason that is not the rows' (it is retried). */
  failed(err: unknown): void;
}

export interface WriteWithRetryOptions<T extends WritableItem> {
  /** Writes rows in one transaction (`Storage.writeRows`). */
  readonly write: (rows: readonly StorageRow[], origins: readonly OutcomeOrigin[]) => Promise<WriteResult>;
  /**
   * Told each part of the batch as soon as it is committed (a part: the batch, or a half of a
   * bisection), with what the write said of it (`storedBy` when some rows were duplicates).
   */
  readonly onStored?: (items: readonly T[], result: WriteResult) => void;
  /** Told each item the database refuses for good (bisected down to itself); the caller decides its fate. */
  readonly onRefused: (item: T, err: unknown) => Promise<void> | void;
  /** Delay between retries of a transient failure. */
  readonly backoff: BackoffOptions;
  /** Waits `ms` (milliseconds) between retries; a forced shutdown may cut it short. */
  readonly sleep: (ms: number) => Promise<void>;
  /** True once retries must end (forced shutdown). */
  readonly aborted: () => boolean;
  /** Told every commit and every transient failure (readiness follows them); none by default. */
  readonly health?: WriteHealth;
  readonly metrics: Metrics;
  readonly logger: Logger;
}

/**
 * How a write ended: every item committed or refused (`settled`), or retries ended by `aborted`;
 * then `stored` and `refused` hold the parts a bisection had settled before (the rest is neither).
 */
export interface RetriedWrite<T> {
  readonly settled: boolean;
  readonly stored: T[];
  readonly refused: T[];
}

/**
 * The one write path of the writer loop and the queue worker: writes `items` in one transaction;
 * a transient failure (database away, overloaded, failing over) is retried with capped backoff,
 * keeping the batch whole; a permanent one (the rows themselves are refused) is bisected so that
 * only the rows the database refuses are handed to `onRefused`, and the rest are committed.
 * Counts every decision: flush duration, batch size, stored and deduplicated events, write
 * errors by kind, retries.
 */
export async function writeWithRetry<T extends WritableItem>(
  items: readonly T[],
  o: WriteWithRetryOptions<T>,
): Promise<RetriedWrite<T>> {
  const stored: T[] = [];
  const refused: T[] = [];
  const settled = await writePart(items, o, stored, refused);
  return { settled, stored, refused };
}

async function writePart<T extends WritableItem>(
  items: readonly T[],
  o: WriteWithRetryOptions<T>,
  stored: T[],
  refused: T[],
): Promise<boolean> {
  const { metrics, logger } = o;
  for (let attempt = 0; ; attempt++) {
    const started = process.hrtime.bigint();
    try {
      const result = await o.write(
        items.map((i) => i.row),
        items.map((i) => i.origin ?? ''),
      );
      metrics.flushDuration.observe(Number(process.hrtime.bigint() - started) / 1e9);
      metrics.batchSize.observe(items.length);
      metrics.eventsDeduplicated.inc(items.length - result.inserted);
      if (result.redoneForDuplicates) metrics.writeRedos.inc();
      let errors = 0;
      for (const item of items) if (item.lane === 'error') errors++;
      metrics.eventsStored.inc({ lane: 'error' }, errors);
      metrics.eventsStored.inc({ lane: 'standard' }, items.length - errors);
      for (const item of items) stored.push(item);
      o.health?.succeeded();
      o.onStored?.(items, result);
      return true;
    } catch (err) {
      if (isPermanentWriteError(err)) {
        metrics.writeErrors.inc({ kind: 'permanent' });
        if (items.length === 1) {
          const item = items[0] as T;
          refused.push(item);
          await o.onRefused(item, err);
          return true;
        }
        const mid = items.length >> 1;
        return (
          (await writePart(items.slice(0, mid), o, stored, refused)) &&
          (await writePart(items.slice(mid), o, stored, refused))
        );
      }
      metrics.writeErrors.inc({ kind: 'transient' });
      o.health?.failed(err);
      if (o.aborted()) {
        logger.error({ err, events: items.length }, 'write failed during forced shutdown; batch not stored');
        return false;
      }
      const delay = backoffDelay(attempt, o.backoff);
      // The first failure of a batch is news; its retries during an outage are counted
      // (sluice_write_retries_total), logged at debug.
      const line = { err, attempt, events: items.length, retryInMs: delay };
      if (attempt === 0) logger.warn(line, 'storage write failed; retrying');
      else logger.debug(line, 'storage write failed again; retrying');
      metrics.writeRetries.inc();
      await o.sleep(delay);
      if (o.aborted()) return false;
    }
  }
}
