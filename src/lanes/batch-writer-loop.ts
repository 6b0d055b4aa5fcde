import type { Clock } from '../clock';
import type { Logger } from '../log/logger';
import type { Metrics } from '../metrics/instruments';
import type { Storage } from '../storage/port';
import type { BackoffOptions } from '../writer/backoff';
import { DrainRate } from '../writer/drain-rate';
import type { BoundedLane, LaneItem } from './lane';
import { StoppableLoop, type TurnResult } from '../writer/stoppable-loop';
import { writeWithRetry, type WriteHealth, type RetriedWrite } from '../writer/write-with-retry';
import { countSkippedCopies } from '../loss-map/duplicates';
import { countEvents, type CountSink } from '../loss-map/event-outcomes';
import { OutcomeTally } from '../loss-map/outcome-tally';

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
   * Group commit for senders that wait on the commit (`SLUICE_ACK=stored`): when no batch is being
   * written, what is queued is written at once instead of waiting for the batch to fill or the
   * flush interval, and the next batch gathers what arrives during that write. Without it (false,
   * the default) a part batch waits up to `flushIntervalMs`: nothing waits on it but the
   * transaction count. Waiting is wrong when the senders are blocked on this very commit: the
   * batch can fill only from senders that are not.
   */
  readonly writeWhenIdle?: boolean;
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
  /**
   * The loss map's counts of events the database refuses, of copies it already held (`duplicate`)
   * and of events dropped at a forced shutdown (`OutcomeRecorder.count`); none when absent.
   */
  readonly outcomes?: CountSink;
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
  private readonly loop: StoppableLoop;
  private readonly inFlight = new Set<Promise<void>>();
  /** Batches whose write `abort` ended: still held, counted by `dropHeld`. */
  private abandoned: LaneItem[][] = [];
  private settleWaiters: SettleWaiter[] = [];

  constructor(private readonly o: BatchWriterOptions) {
    this.drainRate = new DrainRate(o.clock);
    this.maxInFlight = Math.max(1, o.maxInFlight ?? 1);
    this.loop = new StoppableLoop('writer loop', o.logger);
  }

  /** Idempotent. */
  start(): void {
    this.loop.start(() => this.turn());
  }

  /** Tells the loop that events were admitted. Cheap; call after every admission. */
  notify(): void {
    if (!this.loop.pausing) return;
    if (this.queued() >= this.o.batchSize || this.writesNow()) this.loop.wake();
    else if (this.loop.idle) {
      const dueInMs = this.flushDueInMs();
      if (dueInMs !== null) this.loop.wakeIn(Math.max(0, dueInMs));
    }
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
      this.loop.wake();
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
    await this.loop.stop();
    await Promise.all(this.inFlight);
  }

  /**
   * Gives up on retries and cuts the writes in flight (forced shutdown: `Storage.cutWrites`, so a
   * write blocked on the database ends now, uncommitted, and its batch is held for `dropHeld`);
   * `stop` then resolves with events still held.
   */
  abort(): void {
    this.loop.abort();
    this.o.storage.cutWrites?.();
  }

  /**
   * After `abort` and the end of the writes in flight (forced shutdown): counts every event still
   * held — queued, or in a batch whose write was given up or cut — as `dropped` with `reason` in
   * the loss map and in `sluice_events_dropped_total`, logs them per (app, minute, type) — the
   * record left when the loss map's write fails too — frees their room, and returns how many. A
   * batch whose write is still in flight (its storage cannot cut writes, or the cut write has not
   * ended yet) is left out: it may yet commit (then `stored` counts it), and counting it here
   * could count it twice.
   */
  dropHeld(reason: string): number {
    const { errorLane, standardLane, metrics, outcomes } = this.o;
    const tally = new OutcomeTally(Infinity);
    const count: CountSink = (c) => void tally.add(c);
    const drop = (lane: BoundedLane, items: readonly LaneItem[]): void => {
      if (items.length === 0) return;
      countEvents(count, items, subjectOf, 'dropped', reason, '');
      lane.release(items);
    };
    for (const batch of this.abandoned) {
      drop(errorLane, inLane(batch, 'error'));
      drop(standardLane, inLane(batch, 'standard'));
    }
    this.abandoned = [];
    drop(errorLane, errorLane.shift(errorLane.queued));
    drop(standardLane, standardLane.shift(standardLane.queued));
    const counts = tally.drain();
    let total = 0;
    for (const c of counts) {
      total += c.count;
      outcomes?.(c);
    }
    if (total > 0) {
      metrics.eventsDropped.inc({ reason }, total);
      this.o.logger.error(
        {
          reason,
          events: total,
          byAppMinuteType: counts.map(({ app, minute, type, count }) => ({ app, minute, type, count })),
        },
        'events held at a forced shutdown dropped',
      );
    }
    if (this.inFlight.size > 0)
      this.o.logger.error(
        { writes: this.inFlight.size },
        'writes still in flight at a forced shutdown: their events are stored if they commit, else stay pending in the loss map',
      );
    return total;
  }

  /** A part batch is written now: group commit with no write in flight (`writeWhenIdle`). */
  private writesNow(): boolean {
    return this.o.writeWhenIdle === true && this.inFlight.size === 0;
  }

  private queued(): number {
    return this.o.errorLane.queued + this.o.standardLane.queued;
  }

  /** Milliseconds until the oldest queued event has waited the flush interval; null when none is queued. */
  private flushDueInMs(): number | null {
    const { errorLane, standardLane, flushIntervalMs, clock } = this.o;
    const oldest = Math.min(
      errorLane.oldestAdmittedAt ?? Infinity,
      standardLane.oldestAdmittedAt ?? Infinity,
    );
    return Number.isFinite(oldest) ? oldest + flushIntervalMs - clock.now() : null;
  }

  /** Starts writing one batch when one is due and a write may start; else waits for that. */
  private async turn(): Promise<TurnResult> {
    const { loop } = this;
    const { errorLane, standardLane, batchSize } = this.o;
    if (this.inFlight.size >= this.maxInFlight) {
      await loop.pause(null);
      return 'again';
    }
    const queued = this.queued();
    if (queued === 0) {
      if (loop.stopping && this.inFlight.size === 0) return 'done';
      await loop.pause(null);
      return 'again';
    }
    if (queued < batchSize && !loop.stopping && this.settleWaiters.length === 0 && !this.writesNow()) {
      const dueInMs = this.flushDueInMs() ?? 0;
      if (dueInMs > 0) {
        await loop.pause(dueInMs);
        return 'again';
      }
    }
    const fromError = errorLane.shift(batchSize);
    const fromStandard = standardLane.shift(batchSize - fromError.length);
    const batch = [...fromError, ...fromStandard];
    const flight: Promise<void> = this.write(batch).then((outcome) => {
      this.inFlight.delete(flight);
      if (outcome.settled) {
        errorLane.release(fromError);
        standardLane.release(fromStandard);
        this.drainRate.record(batch.length);
      } else {
        // Aborted mid-retry: what a bisection settled is freed; the rest stays held, so `held()`
        // reports it as not flushed, and `dropHeld` counts it.
        const settled = new Set([...outcome.stored, ...outcome.refused]);
        const [done, rest] = [batch.filter((i) => settled.has(i)), batch.filter((i) => !settled.has(i))];
        errorLane.release(inLane(done, 'error'));
        standardLane.release(inLane(done, 'standard'));
        this.drainRate.record(done.length);
        this.abandoned.push(rest);
      }
      loop.wake();
    });
    this.inFlight.add(flight);
    this.countAdmitted(fromError.length, fromStandard.length, flight);
    return 'again';
  }

  /** Tells the waiters of `settled` that a batch took part of what they wait for. */
  private countAdmitted(error: number, standard: number, flight: Promise<void>): void {
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
   * Writes until committed (see `writeWithRetry`): settled once every item is stored, or refused
   * by the database and dropped; not settled only when `abort` ended the retries.
   */
  private async write(items: LaneItem[]): Promise<RetriedWrite<LaneItem>> {
    const { storage, metrics, logger, backoff } = this.o;
    const outcome = await writeWithRetry(items, {
      write: (rows, origins) => storage.writeRows(rows, origins),
      onStored: (part, result) => {
        for (const item of part) item.ticket?.settle();
        if (this.o.outcomes) countSkippedCopies(this.o.outcomes, part, result);
      },
      onRefused: (item, err) => {
        logger.error({ err, eventId: item.id, lane: item.lane }, 'storage refused an event; dropped');
        metrics.eventsDropped.inc({ reason: 'storage_rejected' });
        if (this.o.outcomes)
          countEvents(this.o.outcomes, [item], (i) => i, 'refused', 'storage_rejected', '');
        item.ticket?.settle();
      },
      backoff,
      health: this.o.health,
      sleep: (ms) => this.loop.backoff(ms),
      aborted: () => this.loop.aborted,
      metrics,
      logger,
    });
    return outcome;
  }
}

function inLane(items: readonly LaneItem[], lane: LaneItem['lane']): LaneItem[] {
  return items.filter((i) => i.lane === lane);
}

/** A lane item is its own loss-map subject (app, `ts`, type). */
function subjectOf(item: LaneItem): LaneItem {
  return item;
}
