import type { ActivityDialect } from '../layout/activity-sql';

/**
 * `metric_samples` as PostgreSQL stores them, a view of blocks (migration 9; see
 * sample-buckets.ts): the samples of a range of minutes are those of the blocks of those minutes,
 * read through `metric_blocks_name_bucket` in bucket order, each block's samples sorted by `ts`.
 */
export const PG_ACTIVITY_DIALECT: ActivityDialect = {
  samplesWithin: (start, widthMs) => ({
    where: `ms.bucket >= ${start} AND ms.bucket < ${start} + ${widthMs}
                AND ms.ts >= ${start} AND ms.ts < ${start} + ${widthMs}`,
    oldestFirst: 'ms.bucket ASC, ms.ts ASC',
  }),
};
