import type { EventLimits } from './limits';

/** Whether `ts` lies within the window the collector takes: `maxAgeMs` before `now` to `maxFutureMs` after. */
export function isTsInWindow(
  ts: number,
  now: number,
  limits: Pick<EventLimits, 'maxAgeMs' | 'maxFutureMs'>,
): boolean {
  return ts >= now - limits.maxAgeMs && ts <= now + limits.maxFutureMs;
}
