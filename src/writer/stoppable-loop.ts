import type { Logger } from '../log/logger';

/**
 * - `created`: never started, or started again after `stopped`.
 * - `running`: the turns run.
 * - `stopping`: `stop` was called; each turn finishes what it holds, then answers `done`.
 * - `aborting`: `abort` was called; no turn starts again and every wait ends at once.
 * - `stopped`: every copy of the turn has ended.
 */
export type LoopState = 'created' | 'running' | 'stopping' | 'aborting' | 'stopped';

/** What a turn answers: run again, or end this copy of the loop (only ever while stopping). */
export type TurnResult = 'again' | 'done';

/** One wait of a turn: ended by its timer, `wake` (unless backoff), `stop` (unless backoff) or `abort`. */
interface Wait {
  readonly end: () => void;
  /** A backoff keeps what its turn holds through a stop: only `abort` ends it early. */
  readonly backoff: boolean;
  timer: NodeJS.Timeout | null;
}

/**
 * The loop of a long-running component, apart from its work: the component gives one turn (its
 * work, e.g. take a batch and write it) and the loop runs it over and over in `copies` concurrent
 * copies, with explicit states and the waits `stop` and `abort` can cut short. A turn never
 * sleeps on its own timer: it waits through `pause` (new work, `stop` or `abort` end it) or
 * `backoff` (only `abort` ends it, so a retry keeps its batch through a graceful stop).
 */
export class StoppableLoop {
  private current: LoopState = 'created';
  private wasAborted = false;
  private running: Promise<void> | null = null;
  private readonly waits = new Set<Wait>();

  constructor(
    /** Named in the log line of a crash, e.g. `writer loop`. */
    private readonly name: string,
    private readonly logger: Logger,
  ) {}

  get state(): LoopState {
    return this.current;
  }

  /** True once `stop` or `abort` was called: a turn takes no new work. */
  get stopping(): boolean {
    return this.current === 'stopping' || this.current === 'aborting';
  }

  /**
   * True once `abort` was called, and still after the loop has stopped: work that outlives the
   * loop (a write in flight) reads it to give up instead of retrying.
   */
  get aborted(): boolean {
    return this.wasAborted;
  }

  /** True while some turn waits in `pause`. */
  get pausing(): boolean {
    for (const w of this.waits) if (!w.backoff) return true;
    return false;
  }

  /** True while some turn waits in `pause` with no deadline (only `wake`, `stop` or `abort` end it). */
  get idle(): boolean {
    for (const w of this.waits) if (!w.backoff && w.timer === null) return true;
    return false;
  }

  /**
   * Runs `turn` in `copies` concurrent copies (1 by default; each passes its number, from 0) until
   * each answers `done`, or until `abort`. Idempotent while running. A turn that throws ends the loop: logged as fatal, and
   * `stop` rejects with it.
   */
  start(turn: (copy: number) => Promise<TurnResult>, copies = 1): void {
    if (this.running) return;
    this.current = 'running';
    const copy = async (_: unknown, n: number): Promise<void> => {
      while (!this.aborted) if ((await turn(n)) === 'done') return;
    };
    this.running = Promise.all(Array.from({ length: Math.max(1, copies) }, copy)).then(
      () => {
        this.current = 'stopped';
      },
      (err: unknown) => {
        this.current = 'stopped';
        this.logger.fatal({ err }, `${this.name} crashed`);
        throw err;
      },
    );
  }

  /** Ends the pauses; each turn finishes what it holds and answers `done`. Resolves once all have. Idempotent. */
  async stop(): Promise<void> {
    if (this.current === 'running') this.current = 'stopping';
    this.endWaits(false);
    try {
      await this.running;
    } finally {
      this.running = null;
    }
  }

  /** Ends every wait, backoffs too, and starts no turn again (forced shutdown). `stop` resolves after. */
  abort(): void {
    if (this.current === 'running' || this.current === 'stopping') {
      this.current = 'aborting';
      this.wasAborted = true;
    }
    this.endWaits(true);
  }

  /** Ends the pauses (new work to do). */
  wake(): void {
    this.endWaits(false);
  }

  /** Gives the pauses without a deadline one in `ms` (milliseconds). */
  wakeIn(ms: number): void {
    for (const w of this.waits) if (!w.backoff && w.timer === null) w.timer = setTimeout(w.end, ms);
  }

  /** Waits `ms` milliseconds (null: until woken); `wake`, `stop` and `abort` end it early (and `abort` at once after). */
  pause(ms: number | null): Promise<void> {
    return this.wait(ms, false);
  }

  /** Waits `ms` milliseconds; only `abort` ends it early (a retry keeps its batch through `stop`). */
  backoff(ms: number): Promise<void> {
    return this.wait(ms, true);
  }

  private wait(ms: number | null, backoff: boolean): Promise<void> {
    // A pause begun while stopping still waits (for `wake`, e.g. the end of a write in flight):
    // returning at once would spin the turn without yielding to the event loop.
    if (this.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const wait: Wait = {
        backoff,
        timer: null,
        end: () => {
          if (wait.timer !== null) clearTimeout(wait.timer);
          this.waits.delete(wait);
          resolve();
        },
      };
      if (ms !== null) wait.timer = setTimeout(wait.end, ms);
      this.waits.add(wait);
    });
  }

  private endWaits(backoffsToo: boolean): void {
    for (const w of [...this.waits]) if (backoffsToo || !w.backoff) w.end();
  }
}
