import type { Server } from 'node:http';
import type { Logger } from '../log/logger';
import type { Readiness } from './readiness';

export interface ShutdownOptions {
  readonly readiness: Readiness;
  readonly server: Server;
  /** Further listeners closed in the same step as `server` (the OTLP receiver). Default: none. */
  readonly otherServers?: readonly Server[];
  /** Flushes the lanes; `abort` gives up on retries. */
  readonly writer: { stop(): Promise<void>; abort(): void; held(): number };
  /** Closed after the writer has flushed, in order. */
  readonly closers: ReadonlyArray<{ name: string; close(): Promise<void> | void }>;
  /** Time /readyz answers 503 before the listener closes (milliseconds). */
  readonly drainDelayMs: number;
  /** Longest the whole sequence may take (milliseconds). */
  readonly timeoutMs: number;
  readonly logger: Logger;
  /** Ends the process; tests pass their own. */
  readonly exit: (code: number) => void;
}

/**
 * The shutdown order, in one place:
 * 1. readiness 503 (the load balancer stops sending new requests);
 * 2. wait `drainDelayMs` (its health check must see it);
 * 3. stop accepting connections, close idle keep-alive ones; answers from now on carry `Connection: close`;
 * 4. wait for requests in flight;
 * 5. flush the lanes (every acknowledged event is written);
 * 6. close pools and clients;
 * 7. exit 0.
 * A second signal or the timeout forces exit 1, logging how many events were not flushed.
 */
export class Shutdown {
  private started = false;

  constructor(private readonly o: ShutdownOptions) {}

  /** First call runs the sequence; a second call forces exit. */
  trigger(reason: string): void {
    if (this.started) {
      this.force(`second ${reason}`);
      return;
    }
    this.started = true;
    const timer = setTimeout(() => this.force('shutdown timeout'), this.o.timeoutMs);
    timer.unref();
    this.run(reason).then(
      () => {
        clearTimeout(timer);
        this.o.logger.info('shutdown complete');
        this.o.logger.flush?.();
        this.o.exit(0);
      },
      (err: unknown) => {
        this.o.logger.error({ err }, 'shutdown failed');
        this.force('shutdown error');
      },
    );
  }

  private async run(reason: string): Promise<void> {
    const { readiness, server, writer, logger } = this.o;
    logger.info({ reason, drainDelayMs: this.o.drainDelayMs }, 'draining');
    readiness.startDraining();
    await new Promise((r) => setTimeout(r, this.o.drainDelayMs));

    logger.info('closing listener');
    const servers = [server, ...(this.o.otherServers ?? [])];
    const closed = Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    for (const s of servers) s.closeIdleConnections();
    // Keep-alive connections that were busy become idle after their answer (which said Connection: close).
    const sweeper = setInterval(() => servers.forEach((s) => s.closeIdleConnections()), 100);
    await closed;
    clearInterval(sweeper);

    logger.info({ held: writer.held() }, 'flushing lanes');
    await writer.stop();
    for (const c of this.o.closers) {
      await c.close();
      logger.debug({ closed: c.name }, 'closed');
    }
  }

  private force(why: string): void {
    this.o.writer.abort();
    this.o.logger.error({ why, unflushedEvents: this.o.writer.held() }, 'forced exit; events not flushed');
    this.o.logger.flush?.();
    this.o.exit(1);
  }
}
