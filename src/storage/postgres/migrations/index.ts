import { sql as events001 } from './001_events';
import { sql as scheduler002 } from './002_scheduler';
import { sql as invalidations003 } from './003_rollup_invalidations';
import { sql as readIndexes004 } from './004_read_indexes';
import { sql as outcomes005 } from './005_outcomes';
import { sql as oneMetricTrigger006 } from './006_one_metric_trigger';
import { sql as outcomeCompaction007 } from './007_outcome_compaction';
import { sql as writerRecords008 } from './008_writer_records';
import { sql as metricBlocks009 } from './009_metric_blocks';
import { sql as rollupAppIndexes010 } from './010_rollup_app_indexes';
import { sql as textSearchAndErrorGroups011 } from './011_text_search_and_error_groups';
import { sql as mergedMetricBlocks012 } from './012_merged_metric_blocks';

export interface Migration {
  /** Applied in ascending order; recorded in `schema_migrations`. Never renumber or edit a released one. */
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'events', sql: events001 },
  { version: 2, name: 'scheduler', sql: scheduler002 },
  { version: 3, name: 'rollup_invalidations', sql: invalidations003 },
  { version: 4, name: 'read_indexes', sql: readIndexes004 },
  { version: 5, name: 'outcomes', sql: outcomes005 },
  { version: 6, name: 'one_metric_trigger', sql: oneMetricTrigger006 },
  { version: 7, name: 'outcome_compaction', sql: outcomeCompaction007 },
  { version: 8, name: 'writer_records', sql: writerRecords008 },
  { version: 9, name: 'metric_blocks', sql: metricBlocks009 },
  { version: 10, name: 'rollup_app_indexes', sql: rollupAppIndexes010 },
  { version: 11, name: 'text_search_and_error_groups', sql: textSearchAndErrorGroups011 },
  { version: 12, name: 'merged_metric_blocks', sql: mergedMetricBlocks012 },
];
