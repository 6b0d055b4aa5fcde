import type { OutcomeCount, OutcomeName, OutcomeOrigin } from './outcome';
import { minuteOf } from './outcome';

/** What the loss map needs of an event: its app, `ts` and type. */
export interface OutcomeSubject {
  readonly app: string;
  readonly ts: number;
  readonly type: string;
}

/** Where counts go (`OutcomeRecorder.count`). */
export type CountSink = (c: OutcomeCount) => void;

/**
 * Counts `outcome` for each of `events`, one count per run of events of the same (app, minute,
 * type): a request's events mostly share them, so a request costs a few tally updates, not one
 * per event.
 */
export function countEvents<T>(
  sink: CountSink,
  events: readonly T[],
  subject: (e: T) => OutcomeSubject,
  outcome: OutcomeName,
  reason: string,
  origin: OutcomeOrigin,
): void {
  let app = '';
  let minute = NaN;
  let type = '';
  let count = 0;
  for (const e of events) {
    const s = subject(e);
    const m = minuteOf(s.ts);
    if (count > 0 && s.app === app && m === minute && s.type === type) {
      count++;
      continue;
    }
    if (count > 0) sink({ app, minute, type, outcome, reason, origin, count });
    app = s.app;
    minute = m;
    type = s.type;
    count = 1;
  }
  if (count > 0) sink({ app, minute, type, outcome, reason, origin, count });
}

const KNOWN_TYPES = new Set(['error', 'lifecycle', 'metric', 'log']);

/**
 * The subject of an event as it came off the wire, valid or not: `source.app` when it is a string
 * (else `''`), `ts` when it is a finite number (else `now`), the type when it is one of ours (else
 * `unknown`). Read without validating: a rejected event is counted where it can be told apart.
 */
export function rawSubject(raw: unknown, now: number): OutcomeSubject {
  const e = (typeof raw === 'object' && raw !== null ? raw : {}) as {
    source?: { app?: unknown };
    ts?: unknown;
    type?: unknown;
  };
  const app = typeof e.source === 'object' && e.source !== null ? e.source.app : undefined;
  return {
    app: typeof app === 'string' ? app : '',
    ts: typeof e.ts === 'number' && Number.isFinite(e.ts) ? e.ts : now,
    type: typeof e.type === 'string' && KNOWN_TYPES.has(e.type) ? e.type : 'unknown',
  };
}
