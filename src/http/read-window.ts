import type { Clock } from '../clock';
import { READ_LIMITS } from '../read/read-limits';
import { invalid, type QueryParams } from './query-params';

/**
 * The window [from, to) of a read that summarises one (apps, metric names, error groups): `to`
 * defaults to now, `from` to `READ_LIMITS.defaultWindowMs` before `to`.
 */
export function readWindow(q: QueryParams, clock: Clock): { from: number; to: number } {
  const to = q.time('to') ?? clock.now();
  const from = q.time('from') ?? Math.max(0, to - READ_LIMITS.defaultWindowMs);
  if (from >= to) throw invalid('from', 'must be before "to"');
  return { from, to };
}
