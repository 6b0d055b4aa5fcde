import type { Clock } from '../clock';
import type { Logger } from '../log/logger';
import type { Metrics } from '../metrics/instruments';
import type { Storage } from '../storage/port';
import type { BackoffOptions } from './backoff';
import { DrainRate } from './drain-rate';
import type { BoundedLane, LaneItem } from './lane';
import { writeWithRetry, type WriteHealth } from './write-with-retry';

export interface BatchWriterOptions {
  /** Drained first. */
  readonly errorLane: BoundedLane;
  readonly standardLane: BoundedLane;
  readonly storage: Storage;
  /** Most events per storage transaction. */
  readonly batchSize: number;
  /** Longest an admitted event waits for its batch to fill (milliseconds). */
  readonly flushIntervalMs: number;
  /**
   * Most batches being written at once, each in its own transaction on its own connection
   * (`SLUICE_WRITE_CONCURRENCY`, default 3): the next batch is taken while the database
   * works on the last one. 1 when absent.
   */
  readonly maxInFlight?: number;
  /** Delay between retries of a failed write. */
  readonly backoff: BackoffOptions;
  /** Told every commit and every transient failure: readiness follows them. None by default. */
  readonly health?: WriteHealth;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: Metrics;
}

/**
 * A wait for the events that were held when it began (`BatchWriterLoop.settled`): the batches
 * already in flight, and the first `error` / `standard` events still queued in each lane (lanes are
 * FIFO, so the next batches take exactly those first).
 */
interface SettleWaiter {
  error: number;
  standard: number;
  readonly flights: Promise<void>[];
  readonly resolve: () => void;
}

/**
 * The single writer of a process: takes batches from the lanes (error lane
 * first) when a batch is full or its oldest event has waited the flush
 * interval, writes each in one transaction, and releases the room only after
 * the commit. Up to `maxInFlight` batches are in flight at once. Each batch
 * goes through `writeWithRetry`: transient failures are retried, keeping the
 * batch; the rows the database refuses are dropped (and counted).
 */
export class BatchWriterLoop {
  readonly drainRate: DrainRate;
  private readonly maxInFlight: number;
  private running: Promise<void> | null = null;
  private stopping = false;
  private aborted = false;
  private wake: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly backoffCancels = new Set<() => void>();
  private settleWaiters: SettleWaiter[] = [];

  constructor(private readonly o: BatchWriterOptions) {
    this.drainRate = new DrainRate(o.clock);
    this.maxInFlight = Math.max(1, o.maxInFlight ?? 1);
  }

  /** Idempotent. */
  start(): void {
    if (this.running) return;
    this.stopping = false;
    this.running = this.loop().catch((err: unknown) => {
      this.o.logger.fatal({ err }, 'writer loop crashed');
      throw err;
    });
  }

  /** Tells the loop that events were admitted. Cheap; call after every admission. */
  notify(): void {
    if (this.wake && this.queued() >= this.o.batchSize) this.wakeUp();
    else if (this.wake && this.timer === null) this.armTimer();
  }

  /**
   * Resolves once every event held now (queued or being written) is settled: committed, or refused
   * by the database and dropped. Queued events leave at once instead of at the flush interval, so
   * the wait is one commit, not the interval. Null when nothing is held (no allocation, no wait).
   * Never rejects, and never resolves while their writes are retried (a database that is away):
   * the caller bounds the wait (read barrier, docs/ARCHITECTURE.md "The read side").
   */
  settled(): Promise<void> | null {
    const error = this.o.errorLane.queued;
    const standard = this.o.standardLane.queued;
    if (error + standard === 0) {
      return this.inFlight.size === 0 ? null : Promise.all(this.inFlight).then(() => undefined);
    }
    return new Promise<void>((resolve) => {
      this.settleWaiters.push({ error, standard, flights: [...this.inFlight], resolve });
      this.wakeUp();
    });
  }

  /** Batches being written now, and the most at once. */
  get writesInFlight(): { readonly now: number; readonly max: number } {
    return { now: this.inFlight.size, max: this.maxInFlight };
  }

  /** Events admitted but not yet committed, over both lanes. */
  held(): number {
    return this.o.errorLane.heldEvents + this.o.standardLane.heldEvents;
  }

  /**
   * Flushes everything queued, then ends the loop. Idempotent; resolves when
   * the lanes are empty, or when `abort` was called.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wakeUp();
    await this.running;
    this.running = null;
  }

  /** Gives up on retries (forced shutdown); `stop` then resolves with events still held. */
  abort(): void {
    this.aborted = true;
    this.stopping = true;
    for (const cancel of [...this.backoffCancels]) cancel();
    this.wakeUp();
  }

  private queued(): number {
    return this.o.errorLane.queued + this.o.standardLane.queued;
  }

  private async loop(): Promise<void> {
    const { errorLane, standardLane, batchSize, flushIntervalMs, clock } = this.o;
    while (!this.aborted) {
      if (this.inFlight.size >= this.maxInFlight) {
        await this.sleep(null);
        continue;
      }
      const queued = this.queued();
      if (queued === 0) {
        if (this.stopping && this.inFlight.size === 0) return;
        await this.sleep(null);
        continue;
      }
      if (queued < batchSize && !this.stopping && this.settleWaiters.length === 0) {
        const oldest = Math.min(
          errorLane.oldestAdmittedAt ?? Infinity,
          standardLane.oldestAdmittedAt ?? Infinity,
        );
        const waitMs = oldest + flushIntervalMs - clock.now();
        if (waitMs > 0) {
          await this.sleep(waitMs);
          continue;
        }
      }
      const fromError = errorLane.take(batchSize);
      const fromStandard = standardLane.take(batchSize - fromError.length);
      const flight: Promise<void> = this.write([...fromError, ...fromStandard]).then((settled) => {
        this.inFlight.delete(flight);
        // Aborted mid-retry: the batch stays held, so `held()` reports it as not flushed.
        if (settled) {
          errorLane.release(fromError);
          standardLane.release(fromStandard);
          this.drainRate.record(fromError.length + fromStandard.length);
        }
        this.wakeUp();
      });
      this.inFlight.add(flight);
      this.countTaken(fromError.length, fromStandard.length, flight);
    }
    await Promise.all(this.inFlight);
  }

  /** Tells the waiters of `settled` that a batch took part of what they wait for. */
  private countTaken(error: number, standard: number, flight: Promise<void>): void {
    if (this.settleWaiters.length === 0) return;
    this.settleWaiters = this.settleWaiters.filter((w) => {
      if (w.error > 0 && error > 0) {
        w.error -= Math.min(w.error, error);
        w.flights.push(flight);
      }
      if (w.standard > 0 && standard > 0) {
        w.standard -= Math.min(w.standard, standard);
        if (w.flights[w.flights.length - 1] !== flight) w.flights.push(flight);
      }
      if (w.error > 0 || w.standard > 0) return true;
      void Promise.all(w.flights).then(() => w.resolve());
      return false;
    });
  }

  /**
   * Writes until committed (see `writeWithRetry`). Returns true once every item is settled
   * (stored, or refused by the database and dropped); false only when `abort` ended the retries.
   */
  private async write(items: LaneItem[]): Promise<boolean> {
    const { storage, metrics, logger, backoff } = this.o;
    const outcome = await writeWithRetry(items, {
      write: (rows) => storage.writeRows(rows),
      onStored: (part) => {
        for (const item of part) item.ticket?.settle();
      },
      onRefused: (item, err) => {
        logger.error({ err, eventId: item.id, lane: item.lane }, 'storage refused an event; dropped');
        metrics.eventsDropped.inc({ reason: 'storage_rejected' });
        item.ticket?.settle();
      },
      backoff,
      health: this.o.health,
      sleep: (ms) => this.sleepUninterrupted(ms),
      aborted: () => this.aborted,
      metrics,
      logger,
    });
    return outcome.settled;
  }

  /** Sleeps until `notify`/`stop` wakes the loop or `ms` passes (null: no timeout). */
  private sleep(ms: number | null): Promise<void> {
    return new Promise<void>((resolve) => {
      this.wake = resolve;
      if (ms !== null) this.timer = setTimeout(() => this.wakeUp(), ms);
    });
  }

  /** Backoff sleep: only `abort` cuts it short. */
  private sleepUninterrupted(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const cancel = (): void => {
        clearTimeout(t);
        this.backoffCancels.delete(cancel);
        resolve();
      };
      const t = setTimeout(cancel, ms);
      this.backoffCancels.add(cancel);
    });
  }

  private armTimer(): void {
    const oldest = Math.min(
      this.o.errorLane.oldestAdmittedAt ?? Infinity,
      this.o.standardLane.oldestAdmittedAt ?? Infinity,
    );
    if (!Number.isFinite(oldest)) return;
    const ms = Math.max(0, oldest + this.o.flushIntervalMs - this.o.clock.now());
    this.timer = setTimeout(() => this.wakeUp(), ms);
  }

  private wakeUp(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const w = this.wake;
    this.wake = null;
    w?.();
  }
}
