import fs from 'node:fs';

/** What a synchronous SQLite call on the event loop does, as `sluice_sqlite_longest_call_seconds` labels it. */
export type SqliteCall = 'write' | 'outcomes' | 'read' | 'job' | 'delete';

/** Runs `f` (one synchronous SQLite call, which holds the event loop), timed. */
export type TimeCall = <R>(call: SqliteCall, f: () => R) => R;

/** The longest call of a kind (milliseconds): `wallMs` as the loop saw it, `runningMs` without the waits for a core. */
export interface LongestCall {
  readonly wallMs: number;
  readonly runningMs: number;
}

/** Runs `f` untimed. */
export const untimed: TimeCall = (_call, f) => f();

/**
 * The time this thread spent runnable but waiting for a core, read from the kernel's scheduler
 * statistics (`/proc/thread-self/schedstat`, nanoseconds); null where the file cannot be read.
 * Opened by the thread it describes (the main thread): the descriptor keeps naming that thread.
 */
function runQueueWait(): { read(): number; close(): void } | null {
  let fd: number;
  try {
    fd = fs.openSync('/proc/thread-self/schedstat', 'r');
  } catch {
    return null;
  }
  const buf = Buffer.alloc(96);
  return {
    read() {
      const n = fs.readSync(fd, buf, 0, buf.length, 0);
      return Number(buf.toString('latin1', 0, n).split(' ')[1]);
    },
    close: () => fs.closeSync(fd),
  };
}

/**
 * Times each synchronous SQLite call on the event loop and keeps the longest of each kind until
 * `take`. The event loop and every request wait for the whole call; on a box whose cores are
 * shared, part of it is the wait for a core, which `runningMs` leaves out (equal to `wallMs`
 * where the kernel does not tell it).
 */
export class CallTimer {
  private readonly longest = new Map<SqliteCall, { wallMs: number; runningMs: number }>();
  private waited = runQueueWait();

  /** `onCall` is told every call's times (milliseconds). */
  constructor(private readonly onCall?: (call: SqliteCall, wallMs: number, runningMs: number) => void) {}

  readonly time: TimeCall = (call, f) => {
    const waitedBefore = this.waited?.read() ?? 0;
    const started = performance.now();
    try {
      return f();
    } finally {
      const wallMs = performance.now() - started;
      const runningMs =
        this.waited === null ? wallMs : Math.max(0, wallMs - (this.waited.read() - waitedBefore) / 1e6);
      this.onCall?.(call, wallMs, runningMs);
      const l = this.longest.get(call);
      if (l === undefined) this.longest.set(call, { wallMs, runningMs });
      else {
        l.wallMs = Math.max(l.wallMs, wallMs);
        l.runningMs = Math.max(l.runningMs, runningMs);
      }
    }
  };

  /** Closes the scheduler statistics' file; calls are timed in wall time only after it. Idempotent. */
  close(): void {
    this.waited?.close();
    this.waited = null;
  }

  /** The longest call of each kind since the last `drain`, then forgotten. */
  drain(): ReadonlyMap<SqliteCall, LongestCall> {
    const claimed = new Map(this.longest);
    this.longest.clear();
    return claimed;
  }
}
