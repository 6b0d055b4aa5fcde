import { StorageBusyError } from '../storage-busy';

/** How quickly the writer's busy share follows its writes (milliseconds, time constant). */
const BUSY_TIME_CONSTANT_MS = 1000;
/** The writer counts as pressed while its busy share is at least this. */
const PRESSED_BUSY_SHARE = 0.5;
/** Read time saved up in quiet spells (milliseconds): a console page after one is answered at once. */
const BURST_MS = 500;
/** How often waiting reads look again whether the writer is still pressed (milliseconds). */
const RECHECK_MS = 100;

export interface IngestPrecedenceOptions {
  /**
   * Share of the time reads may run while the writer is pressed (0 < share ≤ 1; 1: reads never
   * wait). Config default 10 % (`SLUICE_PG_READ_SHARE_PERCENT`).
   */
  readonly share: number;
  /** Longest a read waits for its turn before it fails with `StorageBusyError` (milliseconds). */
  readonly waitMs: number;
  /** Monotonic time (milliseconds). Default `performance.now`. */
  readonly now?: () => number;
  /** Called for each read that waited for its turn, with how long (milliseconds). */
  readonly onDeferred?: (waitedMs: number) => void;
  /** Called for each read refused because its turn did not come within `waitMs`. */
  readonly onRefused?: () => void;
}

/**
 * Ingest before reads on the primary (docs/ARCHITECTURE.md, "Reads beside ingest"). The writer
 * reports its writes; its busy share is the time-weighted share of the last second or so with a
 * write in flight. While that share is at least one half (the writer is pressed), reads run one
 * at a time and together take at most `share` of the time: every read's duration is spent from a
 * budget that refills at `share` milliseconds per millisecond, up to `BURST_MS`, and a read starts
 * only while the budget is positive. A read waits its turn for at most `waitMs`, then fails with
 * `StorageBusyError('ingest_first')` (503 with `Retry-After`). While the writer is not pressed,
 * reads start at once, their durations still spent, so reads that just took the CPU do not get
 * it again the moment ingest needs it.
 *
 * On a box where PostgreSQL's CPU is the limit, a read's time is CPU ingest does not get: with 8
 * readers looping, reads took 0.6 of 2 cores and ingest fell to 0.52 × its rate alone.
 */
export class IngestPrecedence {
  private readonly now: () => number;
  private writes = 0;
  private busy = 0;
  private busyAt: number;
  private budget = BURST_MS;
  private budgetAt: number;
  private running = 0;
  /** Waiting reads, oldest first: each call counts its read as running and lets it go. */
  private readonly queue: Array<() => void> = [];
  private pump: NodeJS.Timeout | null = null;

  constructor(private readonly o: IngestPrecedenceOptions) {
    if (!(o.share > 0 && o.share <= 1)) throw new RangeError(`read share must be in (0, 1], got ${o.share}`);
    this.now = o.now ?? (() => performance.now());
    this.busyAt = this.now();
    this.budgetAt = this.busyAt;
  }

  /** A write began on the writer's connections. */
  writeStarted(): void {
    this.follow();
    this.writes++;
  }

  /** A write ended (committed or failed). */
  writeEnded(): void {
    this.follow();
    this.writes = Math.max(0, this.writes - 1);
  }

  /** Whether reads yield to the writer now. */
  pressed(): boolean {
    this.follow();
    return this.busy >= PRESSED_BUSY_SHARE;
  }

  /** Runs `read` when its turn comes. */
  async run<T>(read: () => Promise<T>): Promise<T> {
    if (this.o.share >= 1) return read();
    if (this.queue.length > 0 || !this.mayStart()) await this.turn();
    else this.running++;
    const startedAt = this.now();
    try {
      return await read();
    } finally {
      this.running--;
      this.refill();
      this.budget -= this.now() - startedAt;
      this.admit();
    }
  }

  /** Resolves when the read at the queue's end has started (is counted running); rejects after `waitMs`. */
  private turn(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const since = this.now();
      const timer = setTimeout(() => {
        const at = this.queue.indexOf(waiter);
        if (at >= 0) this.queue.splice(at, 1);
        this.o.onRefused?.();
        reject(
          new StorageBusyError(
            'ingest_first',
            `Ingest has precedence over reads while the writer is busy, and this read's turn did not come within ${this.o.waitMs} ms; retry after Retry-After.`,
          ),
        );
      }, this.o.waitMs);
      timer.unref();
      const waiter = (): void => {
        clearTimeout(timer);
        this.running++;
        this.o.onDeferred?.(this.now() - since);
        resolve();
      };
      this.queue.push(waiter);
      this.schedule();
    });
  }

  /** Whether a read may start now, given the queue is empty. */
  private mayStart(): boolean {
    if (!this.pressed()) return true;
    this.refill();
    return this.running === 0 && this.budget > 0;
  }

  /** Starts the waiting reads whose turn has come, then schedules the next look. */
  private admit(): void {
    while (this.queue.length > 0 && this.mayStart()) (this.queue.shift() as () => void)();
    this.schedule();
  }

  private schedule(): void {
    if (this.pump !== null || this.queue.length === 0) return;
    this.refill();
    const untilBudget = this.budget > 0 ? RECHECK_MS : Math.ceil(-this.budget / this.o.share) + 1;
    this.pump = setTimeout(
      () => {
        this.pump = null;
        this.admit();
      },
      Math.min(untilBudget, RECHECK_MS),
    );
    this.pump.unref();
  }

  private refill(): void {
    const now = this.now();
    this.budget = Math.min(BURST_MS, this.budget + (now - this.budgetAt) * this.o.share);
    this.budgetAt = now;
  }

  /** Moves the busy share to now: toward 1 while a write is in flight, toward 0 while none is. */
  private follow(): void {
    const now = this.now();
    const target = this.writes > 0 ? 1 : 0;
    this.busy = target + (this.busy - target) * Math.exp(-(now - this.busyAt) / BUSY_TIME_CONSTANT_MS);
    this.busyAt = now;
  }
}
