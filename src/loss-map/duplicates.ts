import type { CountSink } from './event-outcomes';
import { minuteOf, type OutcomeOrigin, type StoredGroup } from './outcome';

/** What the loss map needs of an event a writer wrote: its subject and the origin of its request. */
export interface WrittenEvent {
  readonly app: string;
  readonly ts: number;
  readonly type: string;
  readonly origin: OutcomeOrigin;
}

interface Written {
  readonly app: string;
  readonly minute: number;
  readonly type: string;
  direct: number;
  other: number;
  /** The origin of the events that are not `direct` (`sdk`, or `''` where it is not known). */
  otherOrigin: OutcomeOrigin;
}

/**
 * Counts as `duplicate` (reason `duplicate`) the events of a committed write that storage did not
 * store, per (app, minute, type): the events written less the rows `stored` says went in. Storage
 * does not tell which copies of a (app, minute, type) were skipped; when one write mixes `direct`
 * events with others of the same (app, minute, type), the skipped ones are counted against the
 * `direct` ones first (the identity counts only those: an SDK's copy is counted once by its report).
 */
export function countDuplicates(
  sink: CountSink,
  written: readonly WrittenEvent[],
  stored: readonly StoredGroup[],
): void {
  const groups = new Map<string, Written>();
  const keyOf = (app: string, minute: number, type: string): string => `${minute}\u0000${type}\u0000${app}`;
  for (const e of written) {
    const minute = minuteOf(e.ts);
    const key = keyOf(e.app, minute, e.type);
    let g = groups.get(key);
    if (g === undefined) {
      g = { app: e.app, minute, type: e.type, direct: 0, other: 0, otherOrigin: '' };
      groups.set(key, g);
    }
    if (e.origin === 'direct') g.direct++;
    else {
      g.other++;
      g.otherOrigin = e.origin;
    }
  }
  const storedIn = new Map<string, number>();
  for (const s of stored) {
    const key = keyOf(s.app, s.minute, s.type);
    storedIn.set(key, (storedIn.get(key) ?? 0) + s.count);
  }
  for (const [key, g] of groups) {
    const skipped = g.direct + g.other - (storedIn.get(key) ?? 0);
    if (skipped <= 0) continue;
    const direct = Math.min(skipped, g.direct);
    const base = {
      app: g.app,
      minute: g.minute,
      type: g.type,
      outcome: 'duplicate',
      reason: 'duplicate',
    } as const;
    if (direct > 0) sink({ ...base, origin: 'direct', count: direct });
    if (skipped > direct) sink({ ...base, origin: g.otherOrigin, count: skipped - direct });
  }
}

/**
 * After a write of `written` committed: counts its skipped copies as `countDuplicates` does, when
 * the write says it skipped some (`storedBy` given and fewer rows `inserted` than written).
 */
export function countSkippedCopies(
  sink: CountSink,
  written: readonly WrittenEvent[],
  result: { readonly inserted: number; readonly storedBy?: readonly StoredGroup[] | undefined },
): void {
  if (result.storedBy !== undefined && result.inserted < written.length)
    countDuplicates(sink, written, result.storedBy);
}
