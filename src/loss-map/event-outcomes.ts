import { isAppName } from '../events/app-name';
import type { EventLimits } from '../events/limits';
import { isTsInWindow } from '../events/ts-window';
import type { OutcomeCount, OutcomeName, OutcomeOrigin } from './outcome';
import { minuteOf, NO_APP } from './outcome';

/** What the loss map needs of an event: its app, `ts` and type. */
export interface OutcomeSubject {
  readonly app: string;
  readonly ts: number;
  readonly type: string;
}

/** Where counts go (`OutcomeRecorder.count`). */
export type CountSink = (c: OutcomeCount) => void;

/** Most distinct (app, minute, type) one call sums before it hands them on. */
const MAX_SUBJECTS = 32;

interface SubjectCount {
  readonly app: string;
  readonly minute: number;
  readonly type: string;
  count: number;
}

/**
 * Counts `outcome` for each of `events`, one count per distinct (app, minute, type) among them: a
 * request holds a few (one app, a few types, a minute or two), so a request costs a few tally
 * updates, not one per event, however its events are interleaved. The distinct subjects are
 * found by a scan of a short list (cheaper than a key string per event); past `MAX_SUBJECTS` the
 * list is handed on and started again, so the work stays linear in the events.
 */
export function countEvents<T>(
  sink: CountSink,
  events: readonly T[],
  subject: (e: T) => OutcomeSubject,
  outcome: OutcomeName,
  reason: string,
  origin: OutcomeOrigin,
): void {
  const counts: SubjectCount[] = [];
  const handOn = (): void => {
    for (const c of counts)
      sink({ app: c.app, minute: c.minute, type: c.type, outcome, reason, origin, count: c.count });
    counts.length = 0;
  };
  let last: SubjectCount | undefined;
  for (const e of events) {
    const s = subject(e);
    const minute = minuteOf(s.ts);
    if (last !== undefined && last.minute === minute && last.type === s.type && last.app === s.app) {
      last.count++;
      continue;
    }
    last = undefined;
    for (const c of counts) {
      if (c.minute === minute && c.type === s.type && c.app === s.app) {
        last = c;
        break;
      }
    }
    if (last === undefined) {
      if (counts.length === MAX_SUBJECTS) handOn();
      last = { app: s.app, minute, type: s.type, count: 0 };
      counts.push(last);
    }
    last.count++;
  }
  handOn();
}

const KNOWN_TYPES = new Set(['error', 'lifecycle', 'metric', 'log']);

/**
 * The subject of an event as it came off the wire, valid or not, keyed only by values that pass
 * the rules of stored events, so that no value a client sends can be a key the loss map cannot
 * write: `source.app` when it passes the app-name rule (else `NO_APP`), `ts` when it is an
 * integer within the window the collector takes (else `now`, the minute of receipt), the type
 * when it is one of ours (else `unknown`). Read without validating the rest of the event.
 */
export function rawSubject(
  raw: unknown,
  now: number,
  limits: Pick<EventLimits, 'maxSourceLength' | 'maxAgeMs' | 'maxFutureMs'>,
): OutcomeSubject {
  const e = (typeof raw === 'object' && raw !== null ? raw : {}) as {
    source?: { app?: unknown };
    ts?: unknown;
    type?: unknown;
  };
  const app = typeof e.source === 'object' && e.source !== null ? e.source.app : undefined;
  const { ts } = e;
  return {
    app: isAppName(app, limits.maxSourceLength) ? app : NO_APP,
    ts: typeof ts === 'number' && Number.isSafeInteger(ts) && isTsInWindow(ts, now, limits) ? ts : now,
    type: typeof e.type === 'string' && KNOWN_TYPES.has(e.type) ? e.type : 'unknown',
  };
}
