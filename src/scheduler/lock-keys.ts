import { createHash } from 'node:crypto';

/** Every job the scheduler knows. A job not listed here has no lock key and cannot run. */
export const JOB_NAMES = ['downsample', 'purge', 'partitions'] as const;
export type JobName = (typeof JOB_NAMES)[number];

/** Prefix of every scheduler lock name, so these keys never mean anything else in the database. */
export const LOCK_NAMESPACE = 'sluice:scheduler:';

/**
 * The advisory-lock key of a lock name: the first 8 bytes of SHA-256(`sluice:scheduler:<name>`),
 * read big-endian as a signed 64-bit integer (`pg_try_advisory_xact_lock(bigint)`).
 *
 * Why not `hashtext()` like the migrate and partition locks: hashtext yields 32 bits, promoted to
 * bigint they lie in [-2^31, 2^31). A 64-bit key outside that range (see the unit test) cannot
 * collide with those locks, and a hash computed here is the same on every PostgreSQL version.
 *
 * NEVER change this derivation or a job's name: during a rolling upgrade old and new instances
 * would take different locks for the same job (the claim row would still stop a double run, but
 * the lock would no longer keep their transactions apart).
 */
export function lockKeyOf(name: string): bigint {
  const digest = createHash('sha256').update(`${LOCK_NAMESPACE}${name}`, 'utf8').digest();
  return digest.readBigInt64BE(0);
}

/** The fixed registry: one key per job, computed once. */
export const JOB_LOCK_KEYS: Readonly<Record<JobName, bigint>> = Object.freeze({
  downsample: lockKeyOf('downsample'),
  purge: lockKeyOf('purge'),
  partitions: lockKeyOf('partitions'),
});
