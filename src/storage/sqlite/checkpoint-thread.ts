import type { MessagePort } from 'node:worker_threads';
import type DatabaseConstructor from 'better-sqlite3';

/** What the checkpoint thread is given (`workerData`). */
export interface CheckpointThreadData {
  /** The database file; the thread opens its own connection to it. */
  readonly file: string;
  /** `require.resolve('better-sqlite3')` in the parent: the thread runs from a string, not a file. */
  readonly driver: string;
  /** Pause between two passes that found nothing left to copy (milliseconds). */
  readonly idleMs: number;
  /** Pause after a pass that a lock kept from completing (milliseconds), so the writer gets it. */
  readonly busyPauseMs: number;
  /** Log size past which a pass ends with a TRUNCATE checkpoint, which waits for the writer (bytes). */
  readonly truncateAtBytes: number;
  /** How long a checkpoint waits for a lock (milliseconds): the thread waits, not the event loop. */
  readonly busyTimeoutMs: number;
}

/** One checkpoint the thread ran. */
export interface CheckpointDone {
  readonly kind: 'checkpoint';
  readonly mode: 'passive' | 'truncate';
  /** Its duration (milliseconds). */
  readonly ms: number;
  /** Frames in the log after it (0 after a TRUNCATE that completed). */
  readonly logFrames: number;
  /** Frames of the log already copied into the database file after it. */
  readonly copiedFrames: number;
  /** True when a lock kept it from completing (it is tried again at the next pass). */
  readonly busy: boolean;
  readonly pageSize: number;
}

/** The thread's messages: each checkpoint, then `stopped` after the last one at `stop`. */
export type CheckpointThreadMessage = CheckpointDone | { readonly kind: 'stopped' };

/** The parent's only message: run a last TRUNCATE checkpoint, close the connection, end. */
export interface CheckpointStop {
  readonly kind: 'stop';
}

/**
 * The body of the checkpoint thread. It runs from its source text (`checkpointThreadSource`), so it
 * MUST stay self-contained: no import, no name of this module or another is reachable in the
 * thread, only its parameters and globals.
 *
 * A pass runs `PRAGMA wal_checkpoint(PASSIVE)`: it copies the log's frames into the database file
 * without taking the write lock, so the writer on the main thread never waits for it. While it
 * leaves frames behind (the writer committed meanwhile) the next pass runs at once; the first
 * writer to find every frame copied starts the log again from its beginning. A writer that
 * commits without a pause can keep that from happening: past `truncateAtBytes` the pass ends with
 * `wal_checkpoint(TRUNCATE)`, which waits for the writer, takes the write lock while it copies the
 * rest (the writer waits, on the event loop, that long) and empties the log. A reader holding an
 * old snapshot (another process) keeps any checkpoint from copying past it: the TRUNCATE then
 * gives up after `busyTimeoutMs` and the next pass comes `busyPauseMs` later.
 */
export function runCheckpointThread(
  port: MessagePort,
  data: CheckpointThreadData,
  Database: typeof DatabaseConstructor,
): void {
  const db = new Database(data.file);
  db.pragma(`busy_timeout = ${Math.trunc(data.busyTimeoutMs)}`);
  const pageSize = Number(db.pragma('page_size', { simple: true }));
  let timer: NodeJS.Timeout | null = null;
  let stopping = false;

  const checkpoint = (mode: 'passive' | 'truncate'): CheckpointDone => {
    const started = performance.now();
    const row = db.pragma(`wal_checkpoint(${mode.toUpperCase()})`) as Array<{
      busy: number;
      log: number;
      checkpointed: number;
    }>;
    const r = row[0] ?? { busy: 1, log: -1, checkpointed: -1 };
    const done: CheckpointDone = {
      kind: 'checkpoint',
      mode,
      ms: performance.now() - started,
      logFrames: Math.max(0, r.log),
      copiedFrames: Math.max(0, r.checkpointed),
      busy: r.busy !== 0,
      pageSize,
    };
    port.postMessage(done);
    return done;
  };

  const pass = (): void => {
    timer = null;
    if (stopping) return;
    let done = checkpoint('passive');
    if (done.logFrames * pageSize > data.truncateAtBytes) done = checkpoint('truncate');
    // A busy TRUNCATE held the write lock while it waited: trying again at once would starve the
    // writer, whose own wait for the lock blocks the event loop.
    const pause = done.busy ? data.busyPauseMs : done.copiedFrames < done.logFrames ? 0 : data.idleMs;
    timer = setTimeout(pass, pause);
  };

  port.on('message', (message: CheckpointStop) => {
    if (message.kind !== 'stop' || stopping) return;
    stopping = true;
    if (timer !== null) clearTimeout(timer);
    try {
      checkpoint('truncate');
    } finally {
      db.close();
      port.postMessage({ kind: 'stopped' });
      port.close();
    }
  });
  pass();
}

/**
 * The thread's program: `runCheckpointThread` from its compiled source, so it runs the same from
 * `dist/` and from the TypeScript sources under test (a worker cannot load a `.ts` file).
 */
export function checkpointThreadSource(): string {
  return [
    "const { parentPort, workerData } = require('node:worker_threads');",
    `(${runCheckpointThread.toString()})(parentPort, workerData, require(workerData.driver));`,
  ].join('\n');
}
