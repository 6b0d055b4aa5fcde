import { DAY_MS, floorTo } from '../../storage/layout/rollups';
import type { Job } from '../job';

export interface PartitionsOptions {
  /** `SLUICE_PARTITIONS_AHEAD_DAYS`: days created ahead of today (UTC, database clock). */
  readonly aheadDays: number;
}

/**
 * PostgreSQL: creates today's and the coming days' partitions ahead of time. Inserts never depend
 * on it: rows for a day without a partition land in the default partition.
 */
export function partitionsJob(options: PartitionsOptions): Job {
  return {
    name: 'partitions',
    async run({ now, session }) {
      const created = await session.ensurePartitions(floorTo(now, DAY_MS), now + options.aheadDays * DAY_MS);
      return { rows: created, detail: { created } };
    },
  };
}
