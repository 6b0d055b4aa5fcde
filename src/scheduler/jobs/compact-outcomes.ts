import { DAY_MS, ROLLUP_WIDTH_MS, floorTo } from '../../storage/layout/rollups';
import type { Job } from '../job';

/** The loss map's minute: the same width as a 1m rollup bucket, aligned on the epoch alike. */
const MINUTE_MS = ROLLUP_WIDTH_MS['1m'];

export interface CompactOutcomesOptions {
  /**
   * `SLUICE_COMPACT_OUTCOMES_SETTLE_MS` (milliseconds): a minute is folded once it ended at least
   * this long ago, so the minutes writers are still adding to are not rewritten every run.
   * Default 60 000 (the current minute and the one before stay as written).
   */
  readonly settleMs: number;
  /**
   * `SLUICE_COMPACT_OUTCOMES_MAX_ROWS_PER_RUN`: a run stops after the minute that reaches it, so
   * a backlog (a first run over a table never compacted) takes several short runs. Default 100 000.
   */
  readonly maxRowsPerRun: number;
  /** `SLUICE_RETENTION_RAW` (milliseconds): minutes the purge job removes are left to it. */
  readonly retentionRawMs: number;
}

/** The minutes a run folds: [fromMs, beforeMs), both multiples of a minute. */
export interface CompactionRange {
  /** The purge's raw cutoff (see purgeCutoffs): older minutes are the purge's, not ours to rewrite. */
  readonly fromMs: number;
  /** Start of the oldest minute that ended less than `settleMs` ago. */
  readonly beforeMs: number;
}

/**
 * Minutes m with m + 1 min ≤ now − settle, down to the purge's raw cutoff: the purge deletes
 * rows before that cutoff in batches of its own, and leaving them to it keeps the two jobs off
 * each other's rows (they hold different locks and may run at once).
 */
export function compactionRange(
  now: number,
  o: Omit<CompactOutcomesOptions, 'maxRowsPerRun'>,
): CompactionRange {
  return { fromMs: floorTo(now - o.retentionRawMs, DAY_MS), beforeMs: floorTo(now - o.settleMs, MINUTE_MS) };
}

/**
 * The loss map (`event_outcomes`) is append-only: every write transaction adds its own rows, and
 * reads sum them. This job bounds its growth: each settled minute's rows become one row per key
 * holding their sum, minute by minute (oldest first), each minute in one statement or
 * transaction, so a reader's sums never change. A row written later into a folded minute (late
 * events, an SDK's delayed report) is folded into its key's row by a later run. See
 * MaintenanceSession.compactOutcomeMinute for what each storage guarantees.
 */
export function compactOutcomesJob(options: CompactOutcomesOptions): Job {
  const { maxRowsPerRun, settleMs } = options;
  if (!Number.isSafeInteger(maxRowsPerRun) || maxRowsPerRun < 1)
    throw new Error('compact_outcomes maxRowsPerRun must be ≥ 1');
  if (!Number.isSafeInteger(settleMs) || settleMs < 0)
    throw new Error('compact_outcomes settleMs must be ≥ 0');
  return {
    name: 'compact_outcomes',
    async run({ now, session, signal }) {
      const { fromMs, beforeMs } = compactionRange(now, options);
      let minutes = 0;
      let folded = 0;
      let written = 0;
      let caughtUp = false;
      while (folded < maxRowsPerRun) {
        const r = await session.compactOutcomeMinute(fromMs, beforeMs);
        if (r.minute === null) {
          caughtUp = true;
          break;
        }
        minutes++;
        folded += r.folded;
        written += r.written;
        signal.throwIfAborted();
      }
      return { rows: folded, detail: { minutes, folded, written, caughtUp } };
    },
  };
}
