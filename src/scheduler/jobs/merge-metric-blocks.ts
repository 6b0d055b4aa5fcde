import type { Job } from '../job';

export interface MergeMetricBlocksOptions {
  /**
   * `SLUICE_METRIC_RESEND_WINDOW_MS` (milliseconds): a (minute, app, name) group of metric blocks
   * is rewritten once its minute started at least this long ago. Default 120 000: its minute
   * ended a minute ago, so the batches of its samples are in and each group is rewritten about
   * once; a resend after that adds a block, merged on read until the next run.
   */
  readonly resendWindowMs: number;
  /** Most groups one statement rewrites (default 500). */
  readonly groupsPerStatement?: number;
  /** Most groups one run rewrites; the rest waits for the next run (default 20 000). */
  readonly maxGroupsPerRun?: number;
  /** `SLUICE_OUTCOMES` is on: the writer counts what it stores, and the job corrects it. */
  readonly correctCounts: boolean;
  /**
   * Told the copies a run removed (`sluice_events_deduplicated_total`), once the run committed;
   * a run rolled back tells nothing (its groups are merged again by the next run).
   */
  readonly onCopiesRemoved?: (copies: number) => void;
}

const DEFAULT_GROUPS_PER_STATEMENT = 500;
const DEFAULT_MAX_GROUPS_PER_RUN = 20_000;

/**
 * Metric samples carry no key (docs/metric-storage.md, "No key row per sample"): a resent sample is
 * stored again, reads keep its first copy, and this job merges each group of blocks once it is
 * older than the resend window (rewritten as blocks of its distinct samples where it holds copies
 * or small blocks, else marked merged), removing the copies and correcting the loss map in the
 * same transaction (MaintenanceSession.mergeMetricBlocks), once the group got no block for an
 * interval. The window and the interval
 * (`SLUICE_JOB_MERGE_METRIC_BLOCKS_INTERVAL_MS`, default 5 s) bound how long a removed copy stays
 * counted `stored` in a group no longer written to: the window, then two intervals.
 */
export function mergeMetricBlocksJob(options: MergeMetricBlocksOptions): Job {
  const groupsPerStatement = options.groupsPerStatement ?? DEFAULT_GROUPS_PER_STATEMENT;
  const maxGroups = options.maxGroupsPerRun ?? DEFAULT_MAX_GROUPS_PER_RUN;
  if (!Number.isSafeInteger(options.resendWindowMs) || options.resendWindowMs < 0)
    throw new Error('merge_metric_blocks resendWindowMs must be ≥ 0');
  // A group still written to (samples of an old minute arriving all along: a backlog, a load
  // replaying old timestamps) is rewritten only once it got no block for a whole interval, so a
  // sample is rewritten about once, not at every run. The first run of this instance takes all.
  let quietUpToSeq: number | undefined;
  return {
    name: 'merge_metric_blocks',
    async run({ now, session }) {
      const r = await session.mergeMetricBlocks({
        beforeMs: now - options.resendWindowMs,
        groupsPerStatement,
        maxGroups,
        correctCounts: options.correctCounts,
        ...(quietUpToSeq === undefined ? {} : { quietUpToSeq }),
      });
      quietUpToSeq = r.seqNow;
      const copies = r.duplicates;
      return {
        ...(copies > 0 && options.onCopiesRemoved
          ? { committed: () => options.onCopiesRemoved?.(copies) }
          : {}),
        rows: r.blocks + r.written + r.marked,
        detail: {
          groups: r.groups,
          rewritten: r.rewritten,
          blocks: r.blocks,
          marked: r.marked,
          written: r.written,
          duplicates: r.duplicates,
          caughtUp: r.caughtUp,
        },
      };
    },
  };
}
