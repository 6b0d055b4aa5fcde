import type { IncomingHttpHeaders } from 'node:http';
import type { Counter } from 'prom-client';
import { FlowShares } from './flow-shares';
import { OVERLOADED_RETRY_AFTER_S } from './retry-after';

/**
 * What the shed rule may read of a request: its request line and headers, never its body (an
 * `IncomingMessage` is one).
 */
export interface ShedRequest {
  readonly method?: string | undefined;
  readonly url?: string | undefined;
  readonly headers: IncomingHttpHeaders;
}

export interface ShedRuleOptions {
  /**
   * The waits that count as this process's queueing delay (milliseconds): the event loop's
   * standing lag (`EventLoopLag.standingMs`) and the oldest request's wait for a turn
   * (`TurnOrder.oldestWaitMs`). The longer one is the delay.
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
   * The loss map's count of a refused request, told its request line and headers (the only parts
   * of it read): the composition root attributes it to the app of a valid ingest key (a Sentry
   * DSN key on the Sentry paths). None by default.
   */
  readonly countRefused?: (request: ShedRequest) => void;
  /**
   * The flow a request belongs to, told its request line and headers (http/request-flow.ts): while the process
   * sheds, only the flows that send more than their fair share are refused (flow-shares.ts).
   * Default: one flow for every request.
   */
  readonly flowOf?: (request: ShedRequest) => string;
  /** Milliseconds of a monotonic clock. Default `performance.now()`. */
  readonly now?: () => number;
}

/**
 * The shed decision, in one place: while requests already wait `shedAtMs` or longer before the
 * collector works on them, parsing more bodies only adds to the wait, so an ingest request is
 * refused whole (429 `overloaded`) at the cost of its headers alone, provided other requests are
 * in the process already and its flow (its app, named by its headers) sends more than its fair
 * share of what the process lets through — errors included: the CPU, not a lane, is what ran out (the SDK keeps errors longest and resends them). Each front (the
 * overload gate of `/v1/events` and of the OTLP port) asks `refuseUnread()` before reading a body
 * and `hold()`s each request it lets through until it is answered: one count for all fronts.
 */
export class ShedRule {
  /** Ingest requests this process holds now, over every front. */
  private held = 0;
  private readonly flows = new FlowShares();
  private readonly now: () => number;

  constructor(private readonly o: ShedRuleOptions) {
    this.now = o.now ?? (() => performance.now());
  }

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
   * in `rejected` and, with the `request`, in `countRefused`. Only a request whose flow sends more
   * than its fair share is refused.
   */
  refuseUnread(request: ShedRequest = { headers: {} }): { readonly retryAfterSeconds: number } | null {
    if (this.o.shedAtMs <= 0) return null;
    const now = this.now();
    const flow = this.flows.flowOf(this.o.flowOf?.(request) ?? '', now);
    const bytes = costOf(request.headers);
    this.flows.arrived(flow, bytes, now);
    if (
      this.held < (this.o.minInFlight ?? 2) ||
      this.delayMs() < this.o.shedAtMs ||
      !this.flows.overShare(flow, now)
    ) {
      this.flows.letThrough(bytes, now);
      return null;
    }
    this.o.rejected.inc({ code: 'overloaded' });
    this.o.countRefused?.(request);
    return { retryAfterSeconds: OVERLOADED_RETRY_AFTER_S };
  }
}

/** A request's cost to the flow shares: its body's declared length (bytes), or `UNKNOWN_LENGTH_COST`. */
function costOf(headers: IncomingHttpHeaders): number {
  const length = Number(headers['content-length']);
  return Number.isSafeInteger(length) && length >= 0 ? Math.max(1, length) : UNKNOWN_LENGTH_COST;
}

/** The cost of a body sent without `Content-Length` (chunked): a large SDK batch's size (bytes). */
const UNKNOWN_LENGTH_COST = 64 * 1024;
