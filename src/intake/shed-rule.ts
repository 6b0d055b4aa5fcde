import type { IncomingHttpHeaders } from 'node:http';
import type { Counter } from 'prom-client';
import { OVERLOADED_RETRY_AFTER_S } from './retry-after';

export interface ShedRuleOptions {
  /**
   * The waits that count as this process's queueing delay (milliseconds): the event loop's
   * standing lag (`EventLoopLag.standingMs`) and the oldest request's wait for a turn
   * (`TurnQueue.oldestWaitMs`). The longer one is the delay.
   */
  readonly waitsMs: ReadonlyArray<() => number>;
  /** `SLUICE_SHED_LAG_MS`: the delay from which requests are refused unread (milliseconds); 0: never. */
  readonly shedAtMs: number;
  /**
   * Fewest ingest requests this process must already hold (read or being worked on) before it
   * sheds. Default 2. A lone client is never shed: with nothing queued in the process, the delay is
   * the machine's (another process on the same cores), and refusing would only repeat it.
   */
  readonly minInFlight?: number;
  /** `sluice_requests_rejected_total`, counted with `code="overloaded"` per refusal. */
  readonly rejected: Counter<'code'>;
  /**
   * The loss map's count of a refused request, told its headers (the only part of it read): the
   * composition root attributes it to the app of a valid ingest key. None by default.
   */
  readonly countRefused?: (headers: IncomingHttpHeaders) => void;
}

/**
 * The shed decision, in one place: while requests already wait `shedAtMs` or longer before the
 * collector works on them, parsing more bodies only adds to the wait, so an ingest request is
 * refused whole (429 `overloaded`) at the cost of its headers alone, provided other requests are
 * in the process already — errors included: the CPU,
 * not a lane, is what ran out (the SDK keeps errors longest and resends them). Each front (the
 * overload gate of `/v1/events` and of the OTLP port) asks `refuseUnread()` before reading a body
 * and `hold()`s each request it lets through until it is answered: one count for all fronts.
 */
export class ShedRule {
  /** Ingest requests this process holds now, over every front. */
  private held = 0;

  constructor(private readonly o: ShedRuleOptions) {}

  /** Counts a request the process now holds; call the result once it is answered. */
  hold(): () => void {
    this.held++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held--;
    };
  }

  /** This process's queueing delay now (milliseconds). */
  delayMs(): number {
    let delay = 0;
    for (const wait of this.o.waitsMs) delay = Math.max(delay, wait());
    return delay;
  }

  /**
   * Null: go on and read the request. Otherwise refuse it unread with this `Retry-After`, counted
   * in `rejected` and, with its `headers`, in `countRefused`.
   */
  refuseUnread(headers: IncomingHttpHeaders = {}): { readonly retryAfterSeconds: number } | null {
    if (this.o.shedAtMs <= 0 || this.held < (this.o.minInFlight ?? 2)) return null;
    if (this.delayMs() < this.o.shedAtMs) return null;
    this.o.rejected.inc({ code: 'overloaded' });
    this.o.countRefused?.(headers);
    return { retryAfterSeconds: OVERLOADED_RETRY_AFTER_S };
  }
}
