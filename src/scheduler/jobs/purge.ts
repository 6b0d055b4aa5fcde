import { DAY_MS, floorTo } from '../../storage/layout/rollups';
import type { DeleteLimits, Job } from '../job';

export interface PurgeOptions {
  /** `SLUICE_RETENTION_RAW` (milliseconds): raw events and samples; also the run history. */
  readonly retentionRawMs: number;
  /** `SLUICE_RETENTION_1M` (milliseconds). */
  readonly retention1mMs: number;
  /** `SLUICE_RETENTION_1H` (milliseconds). */
  readonly retention1hMs: number;
  /** `SLUICE_PURGE_BATCH_SIZE` and `SLUICE_PURGE_MAX_ROWS_PER_RUN`: bounds of every delete. */
  readonly limits: DeleteLimits;
}

export interface PurgeCutoffs {
  /** Raw rows with ts before it go: a UTC midnight, the start of the oldest day still retained. */
  readonly rawMs: number;
  /** Rollup rows whose bucket ends at or before it go. */
  readonly rollup1mMs: number;
  readonly rollup1hMs: number;
  /** Run history of windows before it goes. */
  readonly runsMs: number;
}

/**
 * The one rule for every table: data goes once its whole bucket is older than the retention. Raw
 * rows live in daily partitions, so their bucket is the UTC day: a row is kept while its day still
 * overlaps [now − retention, now], i.e. raw data is kept for at least the retention and at most
 * one day longer, and both adapters keep exactly the same rows.
 */
export function purgeCutoffs(now: number, o: Omit<PurgeOptions, 'limits'>): PurgeCutoffs {
  return {
    rawMs: floorTo(now - o.retentionRawMs, DAY_MS),
    rollup1mMs: now - o.retention1mMs,
    rollup1hMs: now - o.retention1hMs,
    runsMs: now - o.retentionRawMs,
  };
}

/**
 * Data past its retention. Order matters on PostgreSQL: the bounded deletes first, dropping
 * partitions last, because a drop holds ACCESS EXCLUSIVE on its parent table (blocking the
 * writer) until the run commits, right after.
 */
export function purgeJob(options: PurgeOptions): Job {
  return {
    name: 'purge',
    async run({ now, session, signal }) {
      const cutoffs = purgeCutoffs(now, options);
      const rollups1m = await session.purgeRollups('1m', cutoffs.rollup1mMs, options.limits);
      const rollups1h = await session.purgeRollups('1h', cutoffs.rollup1hMs, options.limits);
      const runs = await session.purgeRunHistory(cutoffs.runsMs, options.limits);
      // The loss map goes with the raw data it describes.
      const outcomes = await session.purgeOutcomes(cutoffs.rawMs, options.limits);
      signal.throwIfAborted();
      const raw = await session.purgeRaw(cutoffs.rawMs, options.limits);
      return {
        rows: rollups1m.rows + rollups1h.rows + runs.rows + outcomes.rows + raw.rows,
        detail: {
          rawRows: raw.rows,
          partitionsDropped: raw.partitionsDropped,
          rollup1mRows: rollups1m.rows,
          rollup1hRows: rollups1h.rows,
          runRows: runs.rows,
          outcomeRows: outcomes.rows,
          done: raw.done && rollups1m.done && rollups1h.done && runs.done && outcomes.done,
        },
      };
    },
  };
}
