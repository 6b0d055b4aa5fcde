/*
 * Interval windows. A job with interval I runs at most once per window [k·I, (k+1)·I) of the
 * database clock: that is what "once per interval" means cluster-wide. Instances time their
 * attempts on their own clock, just after a window starts; only the claim, on the database clock,
 * decides.
 */

import { slotStart } from '../storage/maintenance';

export { slotStart };

/**
 * Delay until the next attempt (milliseconds): just after the next window starts on the process
 * clock, plus `jitter01` (0..1) of a small spread so instances do not all knock at once.
 */
export function delayToNextSlot(nowMs: number, intervalMs: number, jitter01: number): number {
  const next = slotStart(nowMs, intervalMs) + intervalMs;
  const offset = Math.max(1, Math.floor(intervalMs / 100));
  const spread = Math.min(intervalMs / 10, 1000);
  return next - nowMs + offset + Math.floor(jitter01 * spread);
}

/** Pause before asking again when another instance holds the job's lock (milliseconds). */
export function lockRetryDelay(intervalMs: number): number {
  return Math.min(5000, Math.max(20, Math.floor(intervalMs / 8)));
}
