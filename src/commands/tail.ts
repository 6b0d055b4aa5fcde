/**
 * `sluice tail`: follows an app's events through GET /v1/events. Each read asks for the events
 * from `lateness` before the newest one shown (or from `--since` at first), pages through them
 * with the cursor, and prints those not shown yet, oldest first. An event is known by its
 * `(id, ts)`; the set of those shown is kept for the lateness window only, so memory stays bounded.
 * The floor never moves back: the set has forgotten what lies below it, so a read from further back
 * would print those events again.
 */
import { eventLine } from './event-line';
import { readApi } from './read-target';
import type { TailArgs } from './tail-args';

const PAGE = 1000;

type WireEvent = Record<string, unknown> & { id: string; ts: number };

export async function runTail(
  a: TailArgs,
  write: (line: string) => void,
  signal: AbortSignal,
  now: () => number = Date.now,
): Promise<void> {
  const start = now() - a.sinceMs;
  let floor = start;
  let newestShown = -Infinity;
  const shown = new Map<string, number>();
  while (!signal.aborted) {
    const fresh: WireEvent[] = [];
    let cursor: string | null = null;
    do {
      const params = new URLSearchParams(a.filters);
      params.set('from', String(floor));
      params.set('limit', String(PAGE));
      if (cursor !== null) params.set('cursor', cursor);
      const page = await readApi(a.target, '/v1/events', params, signal).catch((err: unknown) => {
        if (signal.aborted) return { events: [], next_cursor: null };
        throw err;
      });
      for (const e of page.events as WireEvent[]) {
        if (!shown.has(`${e.id}@${e.ts}`)) fresh.push(e);
      }
      cursor = page.next_cursor as string | null;
    } while (cursor !== null && !signal.aborted);
    fresh.sort((x, y) => x.ts - y.ts || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
    for (const e of fresh) {
      shown.set(`${e.id}@${e.ts}`, e.ts);
      write(a.json ? JSON.stringify(e) : eventLine(e));
    }
    for (const e of fresh) newestShown = Math.max(newestShown, e.ts);
    floor = Math.max(floor, newestShown - a.latenessMs);
    for (const [key, ts] of shown) if (ts < floor) shown.delete(key);
    await sleep(a.intervalMs, signal);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
