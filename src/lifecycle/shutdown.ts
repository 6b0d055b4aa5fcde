import type { Server } from 'node:http';
import type { Logger } from '../log/logger';
import type { Readiness } from './readiness';

/** Why a shutdown took the forced path: the reason of the events it dropped. */
export type ForcedExitReason = 'shutdown_timeout' | 'second_signal' | 'shutdown_error';

export interface ShutdownOptions {
  readonly readiness: Readiness;
  /** Every listener of the process (the API, and any other front such as OTLP). */
  readonly servers: readonly Server[];
  /**
   * Flushes what this process holds (the lanes); `abort` gives up on retries; `dropHeld`, on the
   * forced path, counts what is still held as lost (`dropped` in the loss map, with the reason)
   * and returns how many.
   */
  readonly flusher: {
    stop(): Promise<void>;
    abort(): void;
    held(): number;
    dropHeld(reason: ForcedExitReason): number;
  };
  /** Closed after the flush, in order. */
  readonly closers: ReadonlyArray<{ name: string; close(): Promise<void> | void }>;
  /**
   * The loss map's recorder (also among `closers` for the graceful path): on the forced path it
   * writes its counts, the dropped events' included, before the process exits (storage is still
   * open then). None when `SLUICE_OUTCOMES=off`.
   */
  readonly lossMap?: { stop(): Promise<void> };
  /** Time /readyz answers 503 before the listeners close (milliseconds). */
  readonly drainDelayMs: number;
  /** After the listeners close: time requests in flight get before their connections are dropped (milliseconds). */
  readonly graceMs: number;
  /** Longest the whole sequence may take before the forced path (milliseconds). */
  readonly timeoutMs: number;
  /**
   * Longest the forced path spends flushing, and then waiting for the writes in flight to end
   * after `abort` (milliseconds, each). Default 5000.
   */
  readonly forcedFlushMs?: number;
  readonly logger: Logger;
  /** Ends the process; tests pass their own. */
  readonly exit: (code: number) => void;
}

/**
 * The shutdown order, in one place (docs/ARCHITECTURE.md, "Shutdown"):
 * 1. readiness 503 (the load balancer stops sending new requests);
 * 2. wait `drainDelayMs` (its health check must see it);
 * 3. stop accepting connections, close idle keep-alive ones; answers from now on carry `Connection: close`;
 * 4. give requests in flight `graceMs`, then drop the connections still open: no answer was
 *    written on them, so nothing on them was acknowledged (a stalled client cannot hold shutdown);
 * 5. flush the lanes (every acknowledged event is written);
 * 6. close pools and clients;
 * 7. exit 0.
 * A second signal or the timeout takes the forced path: drop every connection, flush for at most
 * `forcedFlushMs`, give up on retries and wait as long again for the writes in flight to end, count
 * what is still held as dropped (`ForcedExitReason`) and log it, write the loss map's counts, exit 1.
 */
export class Shutdown {
  private started = false;
  private forcing = false;

  constructor(private readonly o: ShutdownOptions) {}

  /** First call runs the sequence; a second call forces exit. */
  trigger(reason: string): void {
    if (this.started) {
      void this.force(`second ${reason}`, 'second_signal');
      return;
    }
    this.started = true;
    const timer = setTimeout(() => void this.force('shutdown timeout', 'shutdown_timeout'), this.o.timeoutMs);
    timer.unref();
    this.run(reason).then(
      () => {
        if (this.forcing) return;
        clearTimeout(timer);
        this.o.logger.info('shutdown complete');
        this.o.logger.flush?.();
        this.o.exit(0);
      },
      (err: unknown) => {
        this.o.logger.error({ err }, 'shutdown failed');
        void this.force('shutdown error', 'shutdown_error');
      },
    );
  }

  private async run(reason: string): Promise<void> {
    const { readiness, servers, flusher, logger } = this.o;
    logger.info({ reason, drainDelayMs: this.o.drainDelayMs }, 'draining');
    readiness.startDraining();
    await sleep(this.o.drainDelayMs);

    logger.info({ graceMs: this.o.graceMs }, 'closing listeners');
    const closed = Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    for (const s of servers) s.closeIdleConnections();
    // Keep-alive connections that were busy become idle after their answer (which said Connection: close).
    const sweeper = setInterval(() => {
      for (const s of servers) s.closeIdleConnections();
    }, 100);
    const graceOver = Symbol('grace over');
    let graceTimer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      closed,
      new Promise<symbol>((resolve) => (graceTimer = setTimeout(() => resolve(graceOver), this.o.graceMs))),
    ]);
    clearTimeout(graceTimer);
    clearInterval(sweeper);
    if (outcome === graceOver) {
      const open = await Promise.all(servers.map(openConnections));
      logger.warn({ connections: open.reduce((a, b) => a + b, 0) }, 'grace over; dropping open connections');
      for (const s of servers) s.closeAllConnections();
      await closed;
    }

    logger.info({ held: flusher.held() }, 'flushing lanes');
    await flusher.stop();
    for (const c of this.o.closers) {
      // The forced path took over (it ended the flush): it writes the loss map and exits; closing
      // storage under it would lose that write.
      if (this.forcing) return;
      await c.close();
      logger.debug({ closed: c.name }, 'closed');
    }
  }

  private async force(why: string, reason: ForcedExitReason): Promise<void> {
    if (this.forcing) return;
    this.forcing = true;
    const { flusher, logger } = this.o;
    for (const s of this.o.servers) s.closeAllConnections();
    const flushMs = this.o.forcedFlushMs ?? 5000;
    logger.error({ why, held: flusher.held(), flushMs }, 'forced shutdown; flushing what it can');
    const stopped = flusher.stop().then(
      () => true,
      () => false,
    );
    const flushed = await Promise.race([stopped, sleep(flushMs).then(() => false)]);
    if (!flushed) {
      flusher.abort();
      // A write in flight ends within the storage's statement timeout and is not retried: once it
      // has, its events are either stored or still held, never both.
      await Promise.race([stopped, sleep(flushMs)]);
    }
    const dropped = flusher.dropHeld(reason);
    if (dropped > 0) logger.error({ why, reason, droppedEvents: dropped }, 'forced exit; events not flushed');
    else logger.error({ why }, 'forced exit; every event held was flushed');
    // The counts of this process's last decisions, the drops included; on failure the recorder
    // logs what it could not write.
    await this.o.lossMap?.stop().catch((err: unknown) => logger.error({ err }, 'loss map not written'));
    logger.flush?.();
    this.o.exit(1);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function openConnections(server: Server): Promise<number> {
  return new Promise((resolve) => server.getConnections((err, n) => resolve(err ? 0 : n)));
}
