export interface TurnOrderOptions {
  /**
   * Heavy work handed out per event-loop iteration before the loop polls its sockets again
   * (milliseconds). Default 1: about one 100-event request (~1.5 ms), so an ingest request refused
   * unread by the overload gate waits one such request, not several, before it is answered.
   */
  readonly budgetMs?: number;
  /**
   * While this says true, no turn is handed out (checked again every `HOLD_RECHECK_MS`), except to
   * a caller that has waited `maxHoldMs`. Default: never held. The read routes' turns are held
   * while the event loop lags, so reads slow down before ingest is refused.
   */
  readonly holdWhile?: () => boolean;
  /** Longest a held turn waits (milliseconds). Default 1000: a held line still moves. */
  readonly maxHoldMs?: number;
}

/**
 * Hands out turns for the CPU-heavy part of requests (parse, validate, admit), first come first
 * served, for at most `budgetMs` of such work per event-loop iteration; then the loop polls its
 * sockets again. A request that costs nothing (a health check, a refusal by the overload gate) is
 * so answered after a few milliseconds of heavy work at most, never behind a whole burst of heavy
 * requests that happened to become ready together. The wait of the oldest request in line is the
 * collector's own queueing delay: the overload gate sheds on it.
 */
export class TurnOrder {
  private readonly waiting: Array<{ readonly since: number; readonly go: () => void }> = [];
  private running = false;
  /** When the current check phase began handing out turns (`performance.now()`). */
  private phaseStart = 0;
  private readonly budgetMs: number;
  private readonly holdWhile: (() => boolean) | null;
  private readonly maxHoldMs: number;

  constructor(o: TurnOrderOptions = {}) {
    this.budgetMs = o.budgetMs ?? DEFAULT_BUDGET_MS;
    this.holdWhile = o.holdWhile ?? null;
    this.maxHoldMs = o.maxHoldMs ?? DEFAULT_MAX_HOLD_MS;
  }

  /** Resolves when it is the caller's turn; the caller's work then runs before the loop polls again. */
  wait(): Promise<void> {
    return new Promise<void>((go) => {
      this.waiting.push({ since: performance.now(), go });
      if (!this.running) {
        this.running = true;
        setImmediate(this.next);
      }
    });
  }

  /** How long the oldest request in line has waited for its turn (milliseconds); 0 when none. */
  oldestWaitMs(): number {
    const oldest = this.waiting[0];
    return oldest === undefined ? 0 : performance.now() - oldest.since;
  }

  /** Requests waiting for a turn. */
  get length(): number {
    return this.waiting.length;
  }

  // A check phase hands out turns until `budgetMs` have passed, then lets the loop poll again.
  // Each request's work runs in the microtasks that follow its `go()`; the budget is checked in a
  // microtask queued after it, so it sees the time that work took (up to its first real await).
  private readonly next = (): void => {
    this.phaseStart = performance.now();
    this.handOut();
  };

  private handOut(): void {
    const turn = this.waiting[0];
    if (turn === undefined) {
      this.running = false;
      return;
    }
    if (this.holdWhile?.() === true && performance.now() - turn.since < this.maxHoldMs) {
      setTimeout(this.next, HOLD_RECHECK_MS);
      return;
    }
    this.waiting.shift();
    turn.go();
    queueMicrotask(() => {
      if (performance.now() - this.phaseStart < this.budgetMs) this.handOut();
      else setImmediate(this.next);
    });
  }
}

/** Longest run of heavy work between two polls of the sockets (milliseconds): see `budgetMs`. */
const DEFAULT_BUDGET_MS = 1;
const DEFAULT_MAX_HOLD_MS = 1000;
/** How often a held line checks `holdWhile` again (milliseconds). */
const HOLD_RECHECK_MS = 2;
