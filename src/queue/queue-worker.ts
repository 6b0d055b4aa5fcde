import type { JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type { TelemetryEvent } from '../events/types';
import type { Logger } from '../log/logger';
import type { Metrics } from '../metrics/instruments';
import type { QueueMetrics } from '../metrics/queue-instruments';
import { backoffDelay, type BackoffOptions } from '../pipeline/backoff';
import type { LaneName } from '../intake/event-sink';
import { writeWithRetry, type WriteHealth } from '../pipeline/write-with-retry';
import type { Storage, StorageRow } from '../storage/port';
import { publishDeadLetter, type DeadLetter } from './dead-letter';
import { EVENT_COUNT_HEADER } from './event-batches';
import { decodeEvents, encodeEvent, payloadElement, unreadableDetail } from './event-codec';
import { fetchOne, fetchWaiting } from './pull';
import type { PulledMessage } from './pulled-message';
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
  /** Delay between retries of a transient storage failure, and after a failed pull. */
  readonly backoff: BackoffOptions;
  /** Told every commit and every transient failure (`sluice_storage_up` follows them); none by default. */
  readonly health?: WriteHealth;
  readonly metrics: Metrics;
  readonly queueMetrics: QueueMetrics;
  readonly logger: Logger;
}

/** One of the worker's pull-and-write loops: the batch it is writing and the next one it pulled. */
interface Slot {
  /** Messages of the batch being settled. */
  inHand: number;
  /** The next batch, once its background pull is done; kept alive with the batch in hand. */
  prefetched: Fetched[];
}

interface Fetched {
  readonly msg: PulledMessage;
  readonly lane: LaneName;
  /** Events its payload holds (its `Sluice-Events` header; 1 without it). */
  readonly events: number;
}

/** A message being settled, and what of it failed (to hand back, or dead-letter at the last delivery). */
interface InHand {
  readonly fetched: Fetched;
  readonly failures: DeadLetter[];
  /** Its events decoded again, once one of them was refused. */
  redecoded?: Array<TelemetryEvent | null> | null;
}

/**
 * One event of a message in hand, as `writeWithRetry` takes it: its row, not the decoded event,
 * so the event's object graph is garbage as soon as the row is made (it dies young instead of
 * being copied by every scavenge while the batch is written). A refused event is decoded again
 * from its message (`eventAt`), which is rare.
 */
interface EventItem {
  readonly row: StorageRow;
  readonly lane: LaneName;
  readonly index: number;
  readonly message: InHand;
}

/** Longest delay of a handed-back message before its next delivery (milliseconds). */
const MAX_NAK_DELAY_MS = 5000;
const LANES = ['error', 'standard'] as const;

/**
 * One worker's loop: pull a batch of messages (the error consumer first, then the standard one,
 * each with `no_wait`; an idle worker long-polls both) until their events fill a batch, write
 * every event of them through `writeWithRetry` — the collector's writer's own write path and
 * `(id, ts)` dedupe — and ack each message only after the commit of all its events.
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
 *   goes to the dead-letter subject whole before it is even decoded.
 */
export class QueueWorker {
  private running: Promise<void> | null = null;
  private stopping = false;
  private aborted = false;
  /** Wakes every sleep that `stop` (or only `abort`, for storage retries) may cut short. */
  private readonly sleepers = new Set<() => void>();
  private slots: Slot[] = [];
  /** Recent events per message of each lane (a moving average); null until one was seen. */
  private readonly eventsPerMessage: Record<LaneName, number | null> = { error: null, standard: null };

  constructor(private readonly o: QueueWorkerOptions) {}

  /** Messages fetched and not yet settled (acked or handed back). */
  held(): number {
    let n = 0;
    for (const slot of this.slots) n += slot.inHand + slot.prefetched.length;
    return n;
  }

  /** Idempotent. */
  start(): void {
    if (this.running) return;
    this.stopping = false;
    this.slots = Array.from({ length: Math.max(1, this.o.concurrency ?? 1) }, () => ({
      inHand: 0,
      prefetched: [],
    }));
    this.running = Promise.all(this.slots.map((slot) => this.loop(slot))).then(
      () => undefined,
      (err: unknown) => {
        this.o.logger.fatal({ err }, 'worker loop crashed');
        throw err;
      },
    );
  }

  /** Finishes the batch in hand (written and acked), fetches no more, then resolves. Idempotent. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const wake of [...this.sleepers]) wake();
    await this.running;
    this.running = null;
  }

  /** Gives up on storage retries (forced shutdown): the batch in hand is handed back unacked. */
  abort(): void {
    this.aborted = true;
    this.stopping = true;
    for (const wake of [...this.sleepers]) wake();
  }

  private async loop(slot: Slot): Promise<void> {
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
          const next = this.stopping ? null : this.prefetch(slot);
          await this.settle(batch, slot);
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
  private async prefetch(slot: Slot): Promise<Fetched[]> {
    try {
      const next = await this.topUp([]);
      slot.prefetched = next;
      return next;
    } catch (err) {
      this.o.queueMetrics.fetchErrors.inc();
      this.o.logger.warn({ err }, 'pull from JetStream failed; retrying');
      return [];
    }
  }

  /** `carried` plus what waits now: errors first, then standard, until the events fill a batch. */
  private async topUp(carried: Fetched[]): Promise<Fetched[]> {
    const { nc, topology, batchSize, requestTimeoutMs } = this.o;
    const batch = [...carried];
    let events = 0;
    for (const f of batch) events += f.events;
    for (const lane of LANES) {
      // As many messages as the room holds at this lane's recent size (one while it is unknown),
      // again while the lane had all that was asked and room is left.
      for (let room = batchSize - events; room > 0; room = batchSize - events) {
        const perMessage = this.eventsPerMessage[lane];
        const want =
          perMessage === null ? 1 : Math.max(1, Math.min(batchSize, Math.floor(room / perMessage)));
        const msgs = await fetchWaiting(
          nc,
          topology.stream,
          topology.consumers[lane],
          want,
          requestTimeoutMs,
        );
        for (const msg of msgs) {
          const f = this.fetched(msg, lane);
          batch.push(f);
          events += f.events;
        }
        if (msgs.length < want) break;
      }
      if (events >= batchSize) break;
    }
    return batch;
  }

  /** Nothing waiting: long-poll both consumers for one message each (bounded by the fetch expiry). */
  private async idlePoll(): Promise<Fetched[]> {
    const { nc, topology, fetchExpiresMs } = this.o;
    const results = await Promise.all(
      LANES.map((lane) => fetchOne(nc, topology.stream, topology.consumers[lane], fetchExpiresMs)),
    );
    return results.flatMap((msgs, i) => msgs.map((msg) => this.fetched(msg, LANES[i] as LaneName)));
  }

  private fetched(msg: PulledMessage, lane: LaneName): Fetched {
    const declared = Number(msg.header(EVENT_COUNT_HEADER));
    const events = Number.isSafeInteger(declared) && declared > 0 ? declared : 1;
    const seen = this.eventsPerMessage[lane];
    this.eventsPerMessage[lane] = seen === null ? events : seen * 0.8 + events * 0.2;
    return { msg, lane, events };
  }

  private async settle(batch: Fetched[], slot: Slot): Promise<void> {
    const { queueMetrics, maxDeliveries, ackWaitMs, storage } = this.o;
    const started = process.hrtime.bigint();
    slot.inHand = batch.length;
    slot.prefetched = [];
    queueMetrics.workerBatchSize.observe(batch.length);
    const messages: InHand[] = [];
    const items: EventItem[] = [];
    for (const fetched of batch) {
      const { msg, lane } = fetched;
      const count = msg.info.deliveryCount;
      if (count > 1) queueMetrics.redeliveries.inc({ consumer: lane });
      if (count > maxDeliveries) {
        const detail = `delivered ${count} times without an ack`;
        await this.giveUp({ fetched, failures: [{ reason: 'max_deliveries', detail, data: msg.data }] });
        continue;
      }
      const events = decodeEvents(msg.data);
      if (events === null) {
        const detail = unreadableDetail(msg.data);
        await this.failed({ fetched, failures: [{ reason: 'unparseable', detail, data: msg.data }] });
        continue;
      }
      const message: InHand = { fetched, failures: [] };
      messages.push(message);
      for (let index = 0; index < events.length; index++) {
        const event = events[index];
        if (event === null || event === undefined) message.failures.push(unparseableElement(msg.data, index));
        else items.push({ row: storage.toRow(event), lane, index, message });
      }
    }
    queueMetrics.workerBatchEvents.observe(items.length);
    // Keep the batch ours while it is written, however long storage takes.
    const keepAlive = setInterval(
      () => {
        for (const m of messages) m.fetched.msg.working();
        for (const f of slot.prefetched) f.msg.working();
      },
      Math.max(250, Math.floor(ackWaitMs / 3)),
    );
    try {
      const settled = items.length > 0 ? await this.write(items) : true;
      if (!settled) {
        // Forced shutdown mid-retry: hand the batch back now rather than after the ack wait.
        for (const m of messages) m.fetched.msg.nak();
        queueMetrics.messagesNaked.inc({ reason: 'stopping' }, messages.length);
        this.o.logger.warn({ messages: messages.length }, 'batch handed back unwritten (forced shutdown)');
      } else {
        // MUST come after the commit: an ack is JetStream's licence to delete the message.
        const acked = { error: 0, standard: 0 };
        for (const m of messages) {
          if (m.failures.length > 0) {
            await this.failed(m);
            continue;
          }
          m.fetched.msg.ack();
          acked[m.fetched.lane]++;
        }
        for (const lane of LANES) queueMetrics.messagesAcked.inc({ consumer: lane }, acked[lane]);
      }
    } finally {
      clearInterval(keepAlive);
      slot.inHand = 0;
    }
    await this.o.nc.flush().catch((err: unknown) => this.o.logger.warn({ err }, 'flushing acks failed'));
    queueMetrics.workerBatchDuration.observe(Number(process.hrtime.bigint() - started) / 1e9);
  }

  /**
   * Writes until committed (see `writeWithRetry`); the events the database refuses are noted
   * against their message. False when `abort` ended the retries.
   */
  private async write(items: EventItem[]): Promise<boolean> {
    const { storage, metrics, logger, backoff } = this.o;
    const outcome = await writeWithRetry(items, {
      write: (rows) => storage.writeRows(rows),
      onRefused: (item, err) => {
        const event = eventAt(item);
        item.message.failures.push({
          reason: 'storage_rejected',
          detail: err instanceof Error ? err.message : String(err),
          data: encodeEvent(event),
          event: { index: item.index, id: event.id },
        });
      },
      backoff,
      sleep: (ms) => this.sleep(ms, true),
      aborted: () => this.aborted,
      ...(this.o.health && { health: this.o.health }),
      metrics,
      logger,
    });
    return outcome.settled;
  }

  /** Part of this delivery failed for a reason a retry may not fix: hand it back, or give up after N. */
  private async failed(m: InHand): Promise<void> {
    const { msg } = m.fetched;
    const count = msg.info.deliveryCount;
    if (count >= this.o.maxDeliveries) {
      await this.giveUp(m);
      return;
    }
    this.o.logger.warn(
      {
        reasons: [...new Set(m.failures.map((f) => f.reason))],
        detail: m.failures[0]?.detail,
        failedEvents: m.failures.length,
        deliveries: count,
        sequence: msg.info.streamSequence,
      },
      'message failed; handed back for another delivery',
    );
    msg.nak(this.nakDelay(count));
    this.o.queueMetrics.messagesNaked.inc({ reason: 'failed' });
  }

  /** Publishes every failure of `m` as a dead letter, then acks the message; on any failure, hands it back. */
  private async giveUp(m: InHand): Promise<void> {
    const { js, topology, requestTimeoutMs, queueMetrics, logger } = this.o;
    const { msg, lane } = m.fetched;
    const count = msg.info.deliveryCount;
    try {
      for (const letter of m.failures) await publishDeadLetter(js, topology, msg, letter, requestTimeoutMs);
    } catch (err) {
      // Not dead-lettered: keep it in the stream and try again at its next delivery.
      logger.error({ err, sequence: msg.info.streamSequence }, 'dead-letter publish failed');
      msg.nak(this.nakDelay(count));
      queueMetrics.messagesNaked.inc({ reason: 'failed' });
      return;
    }
    msg.ack();
    queueMetrics.messagesAcked.inc({ consumer: lane });
    for (const letter of m.failures) {
      queueMetrics.deadLetters.inc({ reason: letter.reason });
      logger.error(
        {
          reason: letter.reason,
          detail: letter.detail,
          eventId: letter.event?.id,
          deliveries: count,
          sequence: msg.info.streamSequence,
          subject: topology.deadLetterSubject,
        },
        letter.event ? 'event moved to the dead-letter subject' : 'message moved to the dead-letter subject',
      );
    }
  }

  private nakDelay(deliveries: number): number {
    return Math.min(MAX_NAK_DELAY_MS, this.o.ackWaitMs, 250 * 2 ** Math.min(deliveries - 1, 10));
  }

  /** Sleeps `ms`; `stop` cuts it short unless `onlyAbort` (storage retries keep the batch until abort). */
  private sleep(ms: number, onlyAbort = false): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = (): void => {
        if (onlyAbort && !this.aborted) return;
        clearTimeout(t);
        this.sleepers.delete(wake);
        resolve();
      };
      const t = setTimeout(() => {
        this.sleepers.delete(wake);
        resolve();
      }, ms);
      this.sleepers.add(wake);
    });
  }
}

/** The event of a refused item, decoded again from its message (the same bytes decoded before). */
function eventAt(item: EventItem): TelemetryEvent {
  const m = item.message;
  m.redecoded ??= decodeEvents(m.fetched.msg.data);
  const event = m.redecoded?.[item.index];
  // Unreachable: the item was made from this very element when the payload was first decoded.
  if (!event) throw new Error(`event ${item.index} of a message in hand no longer decodes`);
  return event;
}

/** An element of a message that is not an event: dead-lettered alone, as its own JSON. */
function unparseableElement(data: Uint8Array, index: number): DeadLetter {
  return {
    reason: 'unparseable',
    detail: `element ${index} is not a Sluice event`,
    data: payloadElement(data, index),
    event: { index, id: null },
  };
}
