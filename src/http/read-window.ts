import type { Clock } from '../clock';
import { READ_LIMITS } from '../read/read-limits';
import { invalid, type QueryParams } from './query-params';

/**
 * The one rule of every read's window, whatever the route: `from` (inclusive) must be before `to`
 * (exclusive). A window that is not is a 400 naming `from`, never an empty answer or a window
 * rewritten: a client that swapped them learns it at once.
 */
export function checkWindow(from: number | undefined, to: number | undefined): void {
  if (from === undefined || to === undefined || from < to) return;
  throw invalid(
    'from',
    `must be before "to" (from is inclusive, to exclusive; given from=${from}, to=${to}: swap them, or widen the window)`,
  );
}

/** `from` and `to` as given (either may be absent), checked by `checkWindow`. */
export function givenWindow(q: QueryParams): { from: number | undefined; to: number | undefined } {
  const from = q.time('from');
  const to = q.time('to');
  checkWindow(from, to);
  return { from, to };
}

/**
 * The window [from, to) of a read that summarises one (apps, metric names, error groups): `to`
 * defaults to now, `from` to `READ_LIMITS.defaultWindowMs` before `to`.
 */
export function readWindow(q: QueryParams, clock: Clock): { from: number; to: number } {
  const given = givenWindow(q);
  const to = given.to ?? clock.now();
  const from = given.from ?? Math.max(0, to - READ_LIMITS.defaultWindowMs);
  checkWindow(from, to);
  return { from, to };
}
