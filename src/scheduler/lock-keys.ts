import { LOCK_PREFIX, advisoryLockKey, jobLockName } from '../storage/lock-keys';

/** Every job the scheduler knows. A job not listed here has no lock key and cannot run. */
export const JOB_NAMES = [
  'downsample',
  'purge',
  'partitions',
  'compact_outcomes',
  'merge_metric_blocks',
] as const;
export type JobName = (typeof JOB_NAMES)[number];

/** Prefix of every scheduler lock name, so these keys never mean anything else in the database. */
export const LOCK_NAMESPACE = `${LOCK_PREFIX}${jobLockName('')}`;

/**
 * The advisory-lock key of a job: `advisoryLockKey` (src/storage/lock-keys.ts) of
 * `scheduler:<name>`, i.e. the first 8 bytes of SHA-256(`sluice:scheduler:<name>`) as a signed
 * 64-bit integer. NEVER change a job's name: during a rolling upgrade old and new instances would
 * take different locks for the same job (the claim row would still stop a double run, but the
 * lock would no longer keep their transactions apart).
 */
export function lockKeyOf(name: string): bigint {
  return advisoryLockKey(jobLockName(name));
}

/** The fixed registry: one key per job, computed once. */
export const JOB_LOCK_KEYS: Readonly<Record<JobName, bigint>> = Object.freeze({
  downsample: lockKeyOf('downsample'),
  purge: lockKeyOf('purge'),
  partitions: lockKeyOf('partitions'),
  compact_outcomes: lockKeyOf('compact_outcomes'),
  merge_metric_blocks: lockKeyOf('merge_metric_blocks'),
});
