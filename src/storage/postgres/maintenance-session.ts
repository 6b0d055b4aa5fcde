import type pg from 'pg';
import type { Logger } from '../../log/logger';
import type { MaintenanceSession } from '../maintenance';
import { compactOutcomeMinute } from './compact-outcomes';
import { dropExpiredPartitions, ensureDailyPartitionsOn } from './partitions';
import {
  deleteDefaultPartitionRowsBefore,
  deleteErrorGroupsBefore,
  deleteOutcomesBefore,
  deleteRollupsEndingBy,
  deleteSchedulerRunsBefore,
} from './purge';
import { foldErrorGroups } from './error-groups';
import { foldInvalidatedBuckets } from './rollups';
import { mergeMetricBlocks } from './metric-block-merge';

/**
 * Most rows the default partition may hold for a day the partitions job is about to create:
 * moving more would hold ACCESS EXCLUSIVE on the table (blocking the writer) for too long, so the
 * day keeps its rows in the default partition instead.
 */
const MAX_ROWS_TO_MOVE = 50_000;

/** The maintenance port on one PostgreSQL run: every call on the run's transaction client. */
export function postgresSession(
  client: pg.ClientBase,
  logger: Logger,
  lockTimeoutMs: number,
): MaintenanceSession {
  return {
    kind: 'postgres',
    foldInvalidatedBuckets: (limits) =>
      foldInvalidatedBuckets(client, limits.maxEntries, limits.rawSourceBeforeMs),
    foldErrorGroups: (maxEntries, foldBeforeMs) => foldErrorGroups(client, maxEntries, foldBeforeMs),
    async purgeRaw(cutoffMs, limits) {
      // Stragglers first: dropping takes ACCESS EXCLUSIVE locks, held until the run commits.
      const stragglers = await deleteDefaultPartitionRowsBefore(client, cutoffMs, limits);
      const { dropped } = await dropExpiredPartitions(client, logger, cutoffMs, lockTimeoutMs);
      const groups = await deleteErrorGroupsBefore(client, cutoffMs, limits);
      return {
        rows: stragglers.rows + groups.rows,
        partitionsDropped: dropped,
        done: stragglers.done && groups.done,
      };
    },
    purgeRollups: (resolution, cutoffMs, limits) =>
      deleteRollupsEndingBy(client, resolution, cutoffMs, limits),
    purgeRunHistory: (cutoffMs, limits) => deleteSchedulerRunsBefore(client, cutoffMs, limits),
    purgeOutcomes: (cutoffMs, limits) => deleteOutcomesBefore(client, cutoffMs, limits),
    compactOutcomeMinute: (fromMs, beforeMs) => compactOutcomeMinute(client, fromMs, beforeMs),
    mergeMetricBlocks: (limits) => mergeMetricBlocks(client, limits),
    ensurePartitions: (fromMs, toMs) =>
      ensureDailyPartitionsOn(client, logger, {
        fromMs,
        toMs,
        timeoutMs: lockTimeoutMs,
        maxRowsToMove: MAX_ROWS_TO_MOVE,
      }),
  };
}
