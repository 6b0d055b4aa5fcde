import type { JetStreamClient, JsMsg, NatsConnection } from 'nats';
import type { TelemetryEvent } from '../events/types';
import type { Logger } from '../log/logger';
import type { Metrics } from '../metrics/instruments';
import type { QueueMetrics } from '../metrics/queue-instruments';
import { backoffDelay, type BackoffOptions } from '../pipeline/backoff';
import { writeWithRetry } from '../pipeline/write-with-retry';
import type { LaneName } from '../pipeline/lane';
import type { Storage, StorageRow } from '../storage/port';
import { publishDeadLetter, type DeadLetterReason } from './dead-letter';
import { decodeEvent } from './event-codec';
import { fetchOne, fetchWaiting } from './pull';
import type { QueueTopology } from './topology';

export interface QueueWorkerOptions {
  readonly js: JetStreamClient;
  /** `flush` after acking: the acks have reached the server before the next fetch or the exit. */
  readonly nc: Pick<NatsConnection, 'flush'>;
  readonly topology: QueueTopology;
  readonly storage: Pick<Storage, 'toRow' | 'writeRows'>;
  /** Most messages per batch (one storage transaction). */
  readonly batchSize: number;
  /** Idle long poll per consumer (milliseconds). */
  readonly fetchExpiresMs: number;
  /** Bound of a `no_wait` pull and of a dead-letter publish (milliseconds). */
  readonly requestTimeoutMs: number;
  /** The consumers' ack wait (milliseconds): a batch in hand is kept alive (`working`) well within it. */
  readonly ackWaitMs: number;
  /** Deliveries after which a failing message goes to the dead-letter subject. */
  readonly maxDeliveries: number;
  /** Delay between retries of a transient storage failure, and after a failed pull. */
  readonly backoff: BackoffOptions;
  readonly metrics: Metrics;
  readonly queueMetrics: QueueMetrics;
  readonly logger: Logger;
}

interface Fetched {
  readonly msg: JsMsg;
  readonly lane: LaneName;
}

interface Delivery extends Fetched {
  readonly event: TelemetryEvent;
  readonly row: StorageRow;
}

/** Longest delay of a handed-back message before its next delivery (milliseconds). */
const MAX_NAK_DELAY_MS = 5000;

/**
 * One worker's loop: pull a batch (the error consumer first, then the standard one, each with
 * `no_wait`; an idle worker long-polls both), write it through `writeWithRetry` — the collector's
 * writer's own write path and `(id, ts)` dedupe — and ack every message only after the commit.
 *
 * The failure modes, and why nothing is lost or written twice:
 * - the worker dies mid-batch (kill -9): nothing was acked, JetStream delivers the batch again
 *   after the ack wait, and rows already committed are skipped by the dedupe;
 * - storage fails transiently: the batch is retried with backoff, kept alive with `working()` so
 *   it is not redelivered to another worker meanwhile;
 * - storage refuses rows permanently: the batch is bisected, the rows it takes are committed, the
 *   refused message is handed back (nak with delay) until its delivery count reaches
 *   `maxDeliveries`, then moved to the dead-letter subject (acked only after that publish is
 *   acked) — counted, never a crash loop. An unparseable message goes the same way;
 * - a message delivered more than `maxDeliveries` times without an ack (it killed its workers)
 *   goes to the dead-letter subject before it is even decoded.
 */
export class QueueWorker {
  private running: Promise<void> | null = null;
  private stopping = false;
  private aborted = false;
  private cancelSleep: (() => void) | null = null;
  private inHand = 0;
  /** The next batch, once its background pull is done; kept alive with the batch in hand. */
  private prefetched: Fetched[] = [];

  constructor(private readonly o: QueueWorkerOptions) {}

  /** Messages fetched and not yet settled (acked or handed back). */
  held(): number {
    return this.inHand + this.prefetched.length;
  }

  /** Idempotent. */
  start(): void {
    if (this.running) return;
    this.stopping = false;
    this.running = this.loop().catch((err: unknown) => {
      this.o.logger.fatal({ err }, 'worker loop crashed');
      throw err;
    });
  }

  /** Finishes the batch in hand (written and acked), fetches no more, then resolves. Idempotent. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.cancelSleep?.();
    await this.running;
    this.running = null;
  }

  /** Gives up on storage retries (forced shutdown): the batch in hand is handed back unacked. */
  abort(): void {
    this.aborted = true;
    this.stopping = true;
    this.cancelSleep?.();
  }

  private async loop(): Promise<void> {
    let carried: Fetched[] = [];
    for (let failures = 0; !this.aborted;) {
      try {
        const batch = this.stopping ? carried : await this.topUp(carried);
        carried = [];
        if (batch.length === 0) {
          if (this.stopping) return;
          carried = await this.idlePoll();
        } else {
          // Pull the next batch while this one is written: the fetch round trips and the decoding
          // overlap the database's work. When stopping, what was prefetched is settled too (it is
          // in hand); nothing further is pulled.
          const next = this.stopping ? null : this.prefetch();
          await this.settle(batch);
          carried = next === null ? [] : await next;
        }
        failures = 0;
      } catch (err) {
        this.o.queueMetrics.fetchErrors.inc();
        const delay = backoffDelay(failures++, this.o.backoff);
        this.o.logger.warn({ err, retryInMs: delay }, 'pull from JetStream failed; retrying');
        await this.sleep(delay);
      }
    }
  }

  /** The next batch, fetched in the background; a failure is logged and ends in an empty batch. */
  private async prefetch(): Promise<Fetched[]> {
    try {
      const next = await this.topUp([]);
      this.prefetched = next;
      return next;
    } catch (err) {
      this.o.queueMetrics.fetchErrors.inc();
      this.o.logger.warn({ err }, 'pull from JetStream failed; retrying');
      return [];
    }
  }

  /** `carried` plus what waits now: errors first, then standard, up to the batch size. */
  private async topUp(carried: Fetched[]): Promise<Fetched[]> {
    const { js, topology, batchSize, requestTimeoutMs } = this.o;
    const batch = [...carried];
    for (const lane of ['error', 'standard'] as const) {
      const room = batchSize - batch.length;
      if (room <= 0) break;
      const msgs = await fetchWaiting(js, topology.stream, topology.consumers[lane], room, requestTimeoutMs);
      for (const msg of msgs) batch.push({ msg, lane });
    }
    return batch;
  }

  /** Nothing waiting: long-poll both consumers for one message each (bounded by the fetch expiry). */
  private async idlePoll(): Promise<Fetched[]> {
    const { js, topology, fetchExpiresMs } = this.o;
    const lanes = ['error', 'standard'] as const;
    const results = await Promise.all(
      lanes.map((lane) => fetchOne(js, topology.stream, topology.consumers[lane], fetchExpiresMs)),
    );
    return results.flatMap((msgs, i) => msgs.map((msg) => ({ msg, lane: lanes[i] as LaneName })));
  }

  private async settle(batch: Fetched[]): Promise<void> {
    const { queueMetrics, maxDeliveries, ackWaitMs } = this.o;
    const started = process.hrtime.bigint();
    this.inHand = batch.length;
    this.prefetched = [];
    queueMetrics.workerBatchSize.observe(batch.length);
    const deliveries: Delivery[] = [];
    for (const f of batch) {
      const count = f.msg.info.deliveryCount;
      if (count > 1) queueMetrics.redeliveries.inc({ consumer: f.lane });
      if (count > maxDeliveries) {
        await this.deadLetter(f, 'max_deliveries', `delivered ${count} times without an ack`);
        continue;
      }
      const event = decodeEvent(f.msg.data);
      if (event === null) await this.failed(f, 'unparseable', 'payload is not a JSON Sluice event');
      else deliveries.push({ ...f, event, row: this.o.storage.toRow(event) });
    }
    // Keep the batch ours while it is written, however long storage takes.
    const keepAlive = setInterval(
      () => {
        for (const d of deliveries) d.msg.working();
        for (const f of this.prefetched) f.msg.working();
      },
      Math.max(250, Math.floor(ackWaitMs / 3)),
    );
    try {
      const stored = deliveries.length > 0 ? await this.write(deliveries) : [];
      if (stored === null) {
        // Forced shutdown mid-retry: hand the batch back now rather than after the ack wait.
        for (const d of deliveries) d.msg.nak();
        queueMetrics.messagesNaked.inc({ reason: 'stopping' }, deliveries.length);
        this.o.logger.warn({ messages: deliveries.length }, 'batch handed back unwritten (forced shutdown)');
      } else {
        // MUST come after the commit: an ack is JetStream's licence to delete the message.
        let errors = 0;
        for (const d of stored) {
          d.msg.ack();
          if (d.lane === 'error') errors++;
        }
        queueMetrics.messagesAcked.inc({ consumer: 'error' }, errors);
        queueMetrics.messagesAcked.inc({ consumer: 'standard' }, stored.length - errors);
      }
    } finally {
      clearInterval(keepAlive);
      this.inHand = 0;
    }
    await this.o.nc.flush().catch((err: unknown) => this.o.logger.warn({ err }, 'flushing acks failed'));
    queueMetrics.workerBatchDuration.observe(Number(process.hrtime.bigint() - started) / 1e9);
  }

  /**
   * Writes until committed (see `writeWithRetry`). Returns the deliveries stored (all but those
   * the database refused, which were handed back or dead-lettered), or null when `abort` ended
   * the retries.
   */
  private async write(items: Delivery[]): Promise<Delivery[] | null> {
    const { storage, metrics, logger, backoff } = this.o;
    const outcome = await writeWithRetry(items, {
      write: (rows) => storage.writeRows(rows),
      onRefused: (item, err) =>
        this.failed(item, 'storage_rejected', err instanceof Error ? err.message : String(err)),
      backoff,
      sleep: (ms) => this.sleep(ms, true),
      aborted: () => this.aborted,
      metrics,
      logger,
    });
    return outcome.settled ? outcome.stored : null;
  }

  /** This delivery failed for a reason a retry may not fix: hand it back, or give up after N. */
  private async failed(f: Fetched, reason: DeadLetterReason, detail: string): Promise<void> {
    const count = f.msg.info.deliveryCount;
    if (count >= this.o.maxDeliveries) {
      await this.deadLetter(f, reason, detail);
      return;
    }
    this.o.logger.warn(
      { reason, detail, deliveries: count, sequence: f.msg.info.streamSequence },
      'message failed; handed back for another delivery',
    );
    f.msg.nak(this.nakDelay(count));
    this.o.queueMetrics.messagesNaked.inc({ reason: 'failed' });
  }

  private async deadLetter(f: Fetched, reason: DeadLetterReason, detail: string): Promise<void> {
    const { js, topology, requestTimeoutMs, queueMetrics, logger } = this.o;
    const count = f.msg.info.deliveryCount;
    try {
      await publishDeadLetter(js, topology, f.msg, reason, detail, requestTimeoutMs);
    } catch (err) {
      // Not dead-lettered: keep it in the stream and try again at its next delivery.
      logger.error({ err, sequence: f.msg.info.streamSequence }, 'dead-letter publish failed');
      f.msg.nak(this.nakDelay(count));
      queueMetrics.messagesNaked.inc({ reason: 'failed' });
      return;
    }
    f.msg.ack();
    queueMetrics.messagesAcked.inc({ consumer: f.lane });
    queueMetrics.deadLetters.inc({ reason });
    logger.error(
      {
        reason,
        detail,
        deliveries: count,
        sequence: f.msg.info.streamSequence,
        subject: topology.deadLetterSubject,
      },
      'message moved to the dead-letter subject',
    );
  }

  private nakDelay(deliveries: number): number {
    return Math.min(MAX_NAK_DELAY_MS, this.o.ackWaitMs, 250 * 2 ** Math.min(deliveries - 1, 10));
  }

  /** Sleeps `ms`; `stop` cuts it short unless `onlyAbort` (storage retries keep the batch until abort). */
  private sleep(ms: number, onlyAbort = false): Promise<void> {
    return new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        this.cancelSleep = null;
        resolve();
      }, ms);
      this.cancelSleep = () => {
        if (onlyAbort && !this.aborted) return;
        clearTimeout(t);
        this.cancelSleep = null;
        resolve();
      };
    });
  }
}
