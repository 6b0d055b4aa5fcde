/**
 * Apps as a user writes them: one SDK client each, created with its defaults
 * (`createClient({ endpoint, app })`), capturing log lines at a steady rate (an error every 50th
 * event) against a real collector. Records each client's dynamic rate as it changes.
 */
import { createClient, type Client } from '../../sdk/src';

/** One app's load: `perSecond` events for `seconds`, then (optionally) a quieter rate until its rate is back to 1. */
export interface AppLoad {
  readonly app: string;
  readonly perSecond: number;
  readonly seconds: number;
  /**
   * After the load: `perSecond` of this for at most `seconds`, stopping once the SDK's dynamic
   * rate is 1 again (how long it takes is `returnedAfterMs`).
   */
  readonly after?: { readonly perSecond: number; readonly seconds: number };
}

export interface AppRun {
  readonly app: string;
  /** Non-error events and errors captured (before any sampling). */
  readonly events: number;
  readonly errors: number;
  /** Events captured during the load itself (not `after`). */
  readonly loadEvents: number;
  readonly startedAt: number;
  /** When the load ended (ms since the epoch), and when `close()` had sent what was left. */
  readonly loadEndedAt: number;
  readonly closedAt: number;
  /** `stats()` after `close()`. */
  readonly sampled: number;
  readonly bufferFull: number;
  readonly unsent: number;
  /** [ms since start, dynamic rate] at each change. */
  readonly trace: ReadonlyArray<readonly [number, number]>;
  /** After the load ended, how long until the dynamic rate was 1 (ms); null when it was not within `after.seconds`, 0 when it never left 1. */
  readonly returnedAfterMs: number | null;
}

const TICK_MS = 20;
const ERROR_EVERY = 50;

interface Running {
  readonly load: AppLoad;
  readonly client: Client;
  events: number;
  errors: number;
  loadEvents: number;
  loadEndedAt: number;
  returnedAt: number | null;
  readonly trace: Array<readonly [number, number]>;
}

/** Runs every app side by side, then closes each client (at most `closeMs`); resolves with what each did. */
export async function runSdkApps(
  endpoint: string,
  loads: readonly AppLoad[],
  closeMs = 30_000,
): Promise<AppRun[]> {
  const startedAt = Date.now();
  const apps: Running[] = loads.map((load) => ({
    load,
    client: createClient({ endpoint, app: load.app }),
    events: 0,
    errors: 0,
    loadEvents: 0,
    loadEndedAt: NaN,
    returnedAt: null,
    trace: [[0, 1]],
  }));
  const capture = (a: Running, due: number): void => {
    while (a.events + a.errors < due) {
      const seq = a.events + a.errors;
      if (seq % ERROR_EVERY === ERROR_EVERY - 1) {
        a.client.error(new Error(`bench error ${seq}`), { seq });
        a.errors++;
      } else {
        a.client.log('bench.line', `line ${seq}`, { seq });
        a.events++;
      }
    }
  };
  let live = apps.length;
  while (live > 0) {
    const now = Date.now();
    live = 0;
    for (const a of apps) {
      const { load } = a;
      const rate = a.client.stats().dynamicRate;
      const last = a.trace[a.trace.length - 1];
      if (last === undefined || last[1] !== rate) a.trace.push([now - startedAt, rate]);
      const loadMs = load.seconds * 1000;
      if (now - startedAt < loadMs) {
        capture(a, Math.floor(((now - startedAt) / 1000) * load.perSecond));
        a.loadEvents = a.events + a.errors;
        live++;
        continue;
      }
      if (Number.isNaN(a.loadEndedAt)) a.loadEndedAt = startedAt + loadMs;
      const after = load.after;
      if (after === undefined || a.returnedAt !== null) continue;
      if (rate === 1) {
        a.returnedAt = now;
        continue;
      }
      if (now - a.loadEndedAt >= after.seconds * 1000) continue;
      capture(a, a.loadEvents + Math.floor(((now - a.loadEndedAt) / 1000) * after.perSecond));
      live++;
    }
    await new Promise((r) => setTimeout(r, TICK_MS));
  }
  return Promise.all(
    apps.map(async (a): Promise<AppRun> => {
      await a.client.close({ timeoutMs: closeMs });
      const stats = a.client.stats();
      const wentDown = a.trace.some(([, r]) => r < 1);
      return {
        app: a.load.app,
        events: a.events,
        errors: a.errors,
        loadEvents: a.loadEvents,
        startedAt,
        loadEndedAt: a.loadEndedAt,
        closedAt: Date.now(),
        sampled: stats.dropped.sampled,
        bufferFull: stats.dropped.buffer_full,
        unsent: stats.buffered.total + stats.inFlight,
        trace: a.trace,
        returnedAfterMs: !wentDown ? 0 : a.returnedAt === null ? null : a.returnedAt - a.loadEndedAt,
      };
    }),
  );
}

/**
 * How long the rate took to settle (ms since start): the first moment after which it stays within
 * ±10 % of where it ended up before `untilMs`. 0 when it never left 1.
 */
export function settledAfterMs(trace: ReadonlyArray<readonly [number, number]>, untilMs: number): number {
  const within = trace.filter(([t]) => t <= untilMs);
  const final = within[within.length - 1]?.[1] ?? 1;
  let lastOutside = -1;
  within.forEach(([, rate], i) => {
    if (Math.abs(rate - final) > 0.1 * final) lastOutside = i;
  });
  // The change after the last one outside the band is when it entered the band for good.
  return lastOutside === -1 ? 0 : (within[lastOutside + 1]?.[0] ?? untilMs);
}
