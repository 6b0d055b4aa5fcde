import { Worker } from 'node:worker_threads';
import type { Logger } from '../../log/logger';
import type { SqliteMetrics } from '../../metrics/sqlite-instruments';
import {
  checkpointThreadSource,
  type CheckpointDone,
  type CheckpointStop,
  type CheckpointThreadData,
  type CheckpointThreadMessage,
} from './checkpoint-thread';

/** How the write-ahead log of a SQLite file is checkpointed off the event loop. */
export interface WalCheckpointOptions {
  /** Pause between two checkpoints that found nothing to copy (milliseconds). Default 200. */
  readonly idleMs?: number;
  /**
   * Log size past which a checkpoint empties the log while the writer waits (bytes); also the
   * size the log file is cut back to when it starts again (`journal_size_limit`). Default 64 MiB.
   */
  readonly truncateAtBytes?: number;
  /** Pause before a thread that died is started again (milliseconds). Default 1000. */
  readonly restartDelayMs?: number;
  /** How long `stop` waits for the last checkpoint before ending the thread (milliseconds). Default 5000. */
  readonly stopTimeoutMs?: number;
}

export const DEFAULT_WAL_TRUNCATE_AT_BYTES = 64 * 1024 * 1024;

/**
 * How long a TRUNCATE checkpoint waits for the writer's transaction and for readers (milliseconds):
 * it holds the write lock while it waits, so a writer on the event loop waits at most this plus
 * the copy. Past it the checkpoint gives up (counted as busy) and the next pass tries again.
 */
const CHECKPOINT_BUSY_TIMEOUT_MS = 50;
/** Pause after a checkpoint that a lock kept from completing (milliseconds). */
const CHECKPOINT_BUSY_PAUSE_MS = 1000;

interface CheckpointerDeps {
  readonly file: string;
  readonly logger: Logger;
  readonly metrics?: SqliteMetrics;
}

/**
 * Runs SQLite's checkpoints in a worker thread with its own connection to the file, so that no
 * commit on the event loop copies the log into the database (the connection the collector writes
 * on has `wal_autocheckpoint = 0`). A thread that dies is started again after `restartDelayMs`
 * (logged once, counted every time); meanwhile the log only grows. `stop` runs a last TRUNCATE
 * checkpoint in the thread and ends it.
 */
export class WalCheckpointer {
  private worker: Worker | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  private stopping: Promise<void> | null = null;
  private deathLogged = false;
  private readonly data: CheckpointThreadData;
  /** Log size past which a checkpoint empties the log while the writer waits (bytes). */
  readonly truncateAtBytes: number;
  private readonly restartDelayMs: number;
  private readonly stopTimeoutMs: number;

  constructor(
    private readonly deps: CheckpointerDeps,
    options: WalCheckpointOptions = {},
  ) {
    this.data = {
      file: deps.file,
      driver: require.resolve('better-sqlite3'),
      idleMs: options.idleMs ?? 200,
      truncateAtBytes: options.truncateAtBytes ?? DEFAULT_WAL_TRUNCATE_AT_BYTES,
      busyTimeoutMs: CHECKPOINT_BUSY_TIMEOUT_MS,
      busyPauseMs: CHECKPOINT_BUSY_PAUSE_MS,
    };
    this.truncateAtBytes = this.data.truncateAtBytes;
    this.restartDelayMs = options.restartDelayMs ?? 1000;
    this.stopTimeoutMs = options.stopTimeoutMs ?? 5000;
  }

  /** Idempotent. */
  start(): void {
    if (this.worker !== null || this.stopping !== null) return;
    const worker = new Worker(checkpointThreadSource(), { eval: true, workerData: this.data });
    worker.unref();
    worker.on('message', (m: CheckpointThreadMessage) => {
      if (m.kind === 'checkpoint') this.observe(m);
    });
    worker.on('error', (err) => this.died(worker, err));
    worker.on('exit', (code) => this.died(worker, new Error(`checkpoint thread exited with code ${code}`)));
    this.worker = worker;
  }

  /** Runs the last checkpoint and ends the thread; idempotent. */
  stop(): Promise<void> {
    this.stopping ??= this.end();
    return this.stopping;
  }

  private async end(): Promise<void> {
    if (this.restartTimer !== null) clearTimeout(this.restartTimer);
    const worker = this.worker;
    if (worker === null) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ kind: 'stop' } satisfies CheckpointStop);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>(
      (resolve) => (timer = setTimeout(() => resolve('late'), this.stopTimeoutMs)),
    );
    if ((await Promise.race([exited, late])) === 'late') {
      this.deps.logger.warn(
        { waitedMs: this.stopTimeoutMs },
        'SQLite checkpoint thread did not stop in time; ended',
      );
      await worker.terminate();
    }
    clearTimeout(timer);
    this.worker = null;
  }

  private observe(m: CheckpointDone): void {
    const metrics = this.deps.metrics;
    if (metrics === undefined) return;
    metrics.checkpointDuration.observe({ mode: m.mode }, m.ms / 1000);
    metrics.walBytes.set(m.logFrames * m.pageSize);
    if (m.busy) metrics.checkpointsBusy.inc({ mode: m.mode });
  }

  private died(worker: Worker, err: unknown): void {
    if (this.worker !== worker || this.stopping !== null) return;
    this.worker = null;
    this.deps.metrics?.checkpointThreadRestarts.inc();
    if (!this.deathLogged) {
      this.deathLogged = true;
      this.deps.logger.error(
        { err, restartInMs: this.restartDelayMs },
        'SQLite checkpoint thread died; starting another (later deaths are counted in sluice_sqlite_checkpoint_thread_restarts_total)',
      );
    }
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      this.start();
    }, this.restartDelayMs);
    this.restartTimer.unref();
  }
}
