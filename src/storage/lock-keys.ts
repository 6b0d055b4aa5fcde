import { createHash } from 'node:crypto';

/** Prefix of every advisory-lock name Sluice takes, so its keys never mean anything else in the database. */
export const LOCK_PREFIX = 'sluice:';

/**
 * The one key derivation of every advisory lock (migrations, partition DDL, scheduler jobs): the
 * first 8 bytes of SHA-256(`sluice:<name>`), read big-endian as a signed 64-bit integer, the
 * argument of `pg_advisory_xact_lock(bigint)`. Computed here, it is the same on every PostgreSQL
 * version, and 64 bits make a collision with another application's keys unlikely.
 *
 * NEVER change this derivation or a lock's name: during a rolling upgrade old and new instances
 * would take different locks for the same resource.
 */
export function advisoryLockKey(name: string): bigint {
  const digest = createHash('sha256').update(`${LOCK_PREFIX}${name}`, 'utf8').digest();
  return digest.readBigInt64BE(0);
}

/** Lock names of the storage's own serialised steps. */
export const STORAGE_LOCKS = {
  /** Collectors starting together apply migrations one at a time. */
  migrate: 'migrate',
  /** Partition DDL (create ahead, drop expired) across processes. */
  partitions: 'partitions',
} as const;

/** The lock name of a scheduler job (`sluice:scheduler:<job>`). */
export function jobLockName(job: string): string {
  return `scheduler:${job}`;
}
