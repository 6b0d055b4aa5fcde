import { metric, type WireEvent } from './events';
import { postEvents } from './http';

/** One answer a sender got. */
export interface LoadAnswer {
  /** Index of the collector in `urls`. */
  readonly target: number;
  /** HTTP status, or 0 when no answer arrived (connection refused or reset). */
  readonly status: number;
  readonly retryAfter: string | null;
  /** When the request left and when its answer came (ms since the epoch). */
  readonly sentAt: number;
  readonly answeredAt: number;
}

export interface SteadyLoadOptions {
  /** Collectors' base URLs; each gets `sendersPerTarget` senders. */
  readonly urls: readonly string[];
  readonly sendersPerTarget: number;
  readonly eventsPerRequest: number;
  /** Each sender starts a request at most this often (milliseconds). */
  readonly intervalMs: number;
  /** Hard bounds of the run: it stops by itself after either. */
  readonly maxMs: number;
  readonly maxRequests: number;
  /** `source.app` of the events. */
  readonly app: string;
}

/**
 * Steady, bounded load as an SDK would send it: each sender posts batches of fresh events at a
 * fixed pace; a batch answered 429 or 503 is sent again, the same ids, at the next slot (the
 * answer's `Retry-After` is recorded, not waited out: the test looks at the collector's answers
 * through a fault, not at a client's patience). Ids answered 202 are the acknowledged ones.
 */
export class SteadyLoad {
  readonly answers: LoadAnswer[] = [];
  readonly acknowledged: string[] = [];
  private stopping = false;
  private requests = 0;
  private readonly running: Promise<void>;

  constructor(private readonly o: SteadyLoadOptions) {
    const started = Date.now();
    const senders: Array<Promise<void>> = [];
    o.urls.forEach((url, target) => {
      for (let s = 0; s < o.sendersPerTarget; s++) senders.push(this.sender(url, target, started));
    });
    this.running = Promise.all(senders).then(() => undefined);
  }

  /** Stops every sender after its request in flight; resolves when all have stopped. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.running;
  }

  /** Answers with a status other than `statuses`. */
  answersOtherThan(statuses: readonly number[]): LoadAnswer[] {
    return this.answers.filter((a) => !statuses.includes(a.status));
  }

  /**
   * For each collector, how long after `t` (ms since the epoch) it answered 202 to a request sent
   * after `t` (milliseconds); null when it has not (yet).
   */
  first202After(t: number): Array<number | null> {
    return this.o.urls.map((_, target) => {
      const a = this.answers.find((x) => x.target === target && x.status === 202 && x.sentAt >= t);
      return a ? a.answeredAt - t : null;
    });
  }

  private async sender(url: string, target: number, started: number): Promise<void> {
    const { o } = this;
    let batch: WireEvent[] | null = null;
    while (!this.stopping && Date.now() - started < o.maxMs && this.requests < o.maxRequests) {
      this.requests++;
      const slot = Date.now() + o.intervalMs;
      batch ??= Array.from({ length: o.eventsPerRequest }, () => metric(o.app));
      const sentAt = Date.now();
      const res = await postEvents(url, batch).catch(() => null);
      const status = res?.status ?? 0;
      this.answers.push({
        target,
        status,
        retryAfter: res?.headers.get('retry-after') ?? null,
        sentAt,
        answeredAt: Date.now(),
      });
      if (status === 202) {
        for (const e of batch) this.acknowledged.push(e.id as string);
        batch = null;
      }
      const wait = slot - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  }
}
