import type { JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type { Clock } from '../clock';
import type { Logger } from '../log/logger';
import type { Metrics } from '../metrics/instruments';
import type { QueueMetrics } from '../metrics/queue-instruments';
import { backoffDelay, type BackoffOptions } from '../writer/backoff';
import type { WriteHealth } from '../writer/write-with-retry';
import { StoppableLoop, type TurnResult } from '../writer/stoppable-loop';
import type { Storage } from '../storage/port';
import { BatchPuller, type Fetched } from './batch-puller';
import { BatchSettler, type Slot } from './batch-settler';
import { DeadLetterPolicy } from './dead-letter-policy';
import type { CountSink } from '../loss-map/event-outcomes';
import type { QueueTopology } from './topology';

export interface QueueWorkerOptions {
  /** Pull requests and the acks' flush. */
  readonly nc: Pick<NatsConnection, 'flush' | 'publish' | 'subscribe'>;
  /** Dead-letter publishes. */
  readonly js: Pick<JetStreamClient, 'publish'>;
  readonly topology: QueueTopology;
  readonly storage: Pick<Storage, 'toRow' | 'writeRows'>;
  /**
   * Events per batch (one storage transaction): messages are pulled until their events reach it
   * (a batch passes it by at most the last message's events).
   */
  readonly batchSize: number;
  /**
   * Batches being written at once, each pulled and written by its own loop in its own transaction
   * (`SLUICE_WRITE_CONCURRENCY`, default 3): one batch is decoded and pulled while the database
   * stores another. 1 when absent.
   */
  readonly concurrency?: number;
  /** Idle long poll per consumer (milliseconds). */
  readonly fetchExpiresMs: number;
  /** Bound of a `no_wait` pull and of a dead-letter publish (milliseconds). */
  readonly requestTimeoutMs: number;
  /** The consumers' ack wait (milliseconds): a batch in hand is kept alive (`working`) well within it. */
  readonly ackWaitMs: number;
  /** Deliveries after which what keeps failing in a message goes to the dead-letter subject. */
  readonly maxDeliveries: number;
  /**
   * `SLUICE_NATS_MAX_AGE` (milliseconds, default 24 h): a message the stream stored longer ago is
   * acked unwritten and its events counted as expired. None: every message is written.
   */
  readonly maxAgeMs?: number;
  /** Against a message's store time (`maxAgeMs`). Default the system clock. */
  readonly clock?: Clock;
  /** Delay between retries of a transient storage failure, and after a failed pull. */
  readonly backoff: BackoffOptions;
  /** Told every commit and every transient failure (`sluice_storage_up` follows them); none by default. */
  readonly health?: WriteHealth;
  readonly metrics: Metrics;
  readonly queueMetrics: QueueMetrics;
  readonly logger: Logger;
  /** The loss map's counts of dead-lettered and expired events; none when absent. */
  readonly outcomes?: CountSink;
}

/**
 * One worker: `concurrency` copies of one turn on a `StoppableLoop`. A turn pulls a batch of
 * messages (`BatchPuller`: the error consumer first, then the standard one, each with `no_wait`;
 * an idle worker long-polls both) until their events fill a batch, and settles it
 * (`BatchSettler`): every event written through `writeWithRetry` — the collector's writer's own
 * write path and `(id, ts)` dedupe — and each message acked only after the commit of all its
 * events; what keeps failing goes to the `DeadLetterPolicy`.
 *
 * The failure modes, and why nothing is lost or written twice:
 * - the worker dies mid-batch (kill -9): nothing was acked, JetStream delivers the batch again
 *   after the ack wait, and rows already committed are skipped by the dedupe;
 * - storage fails transiently: the batch is retried with backoff, kept alive with `working()` so
 *   it is not redelivered to another worker meanwhile;
 * - storage refuses events permanently: the batch is bisected, the events it takes are committed
 *   (a poison event never holds back its neighbours, in its message or others), and a message
 *   with a refused event is handed back (nak with delay) until its delivery count reaches
 *   `maxDeliveries`; then each refused event alone goes to the dead-letter subject, and the
 *   message is acked only after those publishes are acked — counted, never a crash loop. An
 *   unparseable message (or element of one) goes the same way;
 * - a message delivered more than `maxDeliveries` times without an ack (it killed its workers)
 *   goes to the dead-letter subject whole before it is even decoded;
 * - a message the stream stored more than `maxAgeMs` ago (the workers were away that long) is
 *   acked unwritten, its events counted as expired in the loss map.
 */
/** A slot's loop state between turns: the batch pulled ahead, and the pull failures in a row. */
interface SlotTurns extends Slot {
  carried: Fetched[];
  failures: number;
}

export class QueueWorker {
  private readonly loop: StoppableLoop;
  private readonly puller: BatchPuller;
  private readonly settler: BatchSettler;
  private slots: SlotTurns[] = [];

  constructor(private readonly o: QueueWorkerOptions) {
    this.loop = new StoppableLoop('worker loop', o.logger);
    this.puller = new BatchPuller(o);
    const deadLetters = new DeadLetterPolicy(o);
    this.settler = new BatchSettler({ ...o, deadLetters, loop: this.loop });
  }

  /** Messages fetched and not yet settled (acked or handed back). */
  held(): number {
    let n = 0;
    for (const slot of this.slots) n += slot.inHand + slot.prefetched.length;
    return n;
  }

  /** Idempotent. */
  start(): void {
    if (this.loop.state === 'running' || this.loop.stopping) return;
    const copies = Math.max(1, this.o.concurrency ?? 1);
    this.slots = Array.from({ length: copies }, () => ({
      inHand: 0,
      prefetched: [],
      carried: [],
      failures: 0,
    }));
    this.loop.start((n) => this.turn(this.slots[n] as SlotTurns), copies);
  }

  /** Finishes the batch in hand (written and acked), fetches no more, then resolves. Idempotent. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Gives up on storage retries (forced shutdown): the batch in hand is handed back unacked. */
  abort(): void {
    this.loop.abort();
  }

  /** Settles one batch (pulling the next meanwhile), or long-polls when nothing waits. */
  private async turn(slot: SlotTurns): Promise<TurnResult> {
    const { loop } = this;
    try {
      const batch = loop.stopping ? slot.carried : await this.puller.topUp(slot.carried);
      slot.carried = [];
      if (batch.length === 0) {
        if (loop.stopping) return 'done';
        slot.carried = await this.puller.idlePoll();
      } else {
        // Pull the next batch while this one is written: the fetch round trips and the decoding
        // overlap the database's work. When stopping, what was prefetched is settled too (it is
        // in hand); nothing further is pulled.
        const next = loop.stopping ? null : this.prefetch(slot);
        await this.settler.settle(batch, slot);
        slot.carried = next === null ? [] : await next;
      }
      slot.failures = 0;
    } catch (err) {
      this.o.queueMetrics.fetchErrors.inc();
      const delay = backoffDelay(slot.failures++, this.o.backoff);
      this.o.logger.warn({ err, retryInMs: delay }, 'pull from JetStream failed; retrying');
      await loop.pause(delay);
    }
    return 'again';
  }

  /** The next batch, fetched in the background; a failure is logged and ends in an empty batch. */
  private async prefetch(slot: Slot): Promise<Fetched[]> {
    try {
      const next = await this.puller.topUp([]);
      slot.prefetched = next;
      return next;
    } catch (err) {
      this.o.queueMetrics.fetchErrors.inc();
      this.o.logger.warn({ err }, 'pull from JetStream failed; retrying');
      return [];
    }
  }
}
