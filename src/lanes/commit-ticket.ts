/**
 * Group commit: one ticket per request with `SLUICE_ACK=stored`. Each of the
 * request's admitted events carries it; the writer settles it per committed
 * event, and `committed` resolves once `arm(n)` was called and n events are
 * settled. Arming after admission lets a request admit only part of its events.
 */
export class CommitTicket {
  readonly committed: Promise<void>;
  private settled = 0;
  private expected: number | null = null;
  private resolve!: () => void;

  constructor() {
    this.committed = new Promise<void>((resolve) => {
      this.resolve = resolve;
    });
  }

  /** Sets how many settled events complete the ticket. */
  arm(events: number): void {
    this.expected = events;
    this.check();
  }

  /** Marks one event as committed (or given up on: the request must not wait forever). */
  settle(): void {
    this.settled++;
    this.check();
  }

  private check(): void {
    if (this.expected !== null && this.settled >= this.expected) this.resolve();
  }
}
