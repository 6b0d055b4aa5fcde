import type Database from 'better-sqlite3';
import { ROLLUP_TABLE, ROLLUP_WIDTH_MS, type RollupResolution } from '../layout/rollups';

type Prepare = (sql: string) => Database.Statement;

/** What the purge job removes, each with the column its cutoff applies to. */
export type PurgeTarget =
  'metric_samples' | 'events' | RollupResolution | 'scheduler_runs' | 'event_outcomes' | 'client_reports';

const TARGETS: Readonly<Record<PurgeTarget, { table: string; condition: string }>> = {
  metric_samples: { table: 'metric_samples', condition: 'ts < @bound' },
  events: { table: 'events', condition: 'ts < @bound' },
  '1m': { table: ROLLUP_TABLE['1m'], condition: 'bucket <= @bound' },
  '1h': { table: ROLLUP_TABLE['1h'], condition: 'bucket <= @bound' },
  scheduler_runs: { table: 'scheduler_runs', condition: 'slot_ms < @bound' },
  event_outcomes: { table: 'event_outcomes', condition: 'minute < @bound' },
  client_reports: { table: 'client_reports', condition: 'minute < @bound' },
};

/**
 * Deletes at most `limit` rows of one target past `cutoffMs` in one statement; returns the rows
 * deleted. Raw rows and runs go when older than the cutoff; a rollup row when its whole bucket
 * ends at or before it (bucket + width <= cutoff), as in the PostgreSQL adapter.
 */
export function deleteBatch(prepare: Prepare, target: PurgeTarget, cutoffMs: number, limit: number): number {
  const { table, condition } = TARGETS[target];
  const bound = target === '1m' || target === '1h' ? cutoffMs - ROLLUP_WIDTH_MS[target] : cutoffMs;
  return prepare(
    `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE ${condition} LIMIT @limit)`,
  ).run({ bound, limit }).changes;
}
