import type { NatsConnection } from '@nats-io/nats-core';
import type { Clock } from '../clock';
import type { LaneName } from '../intake/event-sink';
import type { TelemetryEvent } from '../events/types';
import type { Logger } from '../log/logger';
import type { Metrics } from '../metrics/instruments';
import type { QueueMetrics } from '../metrics/queue-instruments';
import type { BackoffOptions } from '../writer/backoff';
import type { StoppableLoop } from '../writer/stoppable-loop';
import { writeWithRetry, type WriteHealth } from '../writer/write-with-retry';
import type { Storage, StorageRow } from '../storage/port';
import { LANES, type Fetched } from './batch-puller';
import type { DeadLetter } from './dead-letter';
import type { DeadLetterPolicy, InHand } from './dead-letter-policy';
import { ORIGIN_HEADER, originOfHeader } from './event-batches';
import { decodeEvents, encodeEvent, payloadElement, unreadableDetail } from './event-codec';
import { countSkippedCopies } from '../loss-map/duplicates';
import { countEvents, type CountSink, type OutcomeSubject } from '../loss-map/event-outcomes';
import type { OutcomeOrigin } from '../loss-map/outcome';

/** One of the worker's pull-and-write loops: the batch it is writing and the next one it pulled. */
export interface Slot {
  /** Messages of the batch being settled. */
  inHand: number;
  /** The next batch, once its background pull is done; kept alive with the batch in hand. */
  prefetched: Fetched[];
}

export interface BatchSettlerOptions {
  /** The acks' flush. */
  readonly nc: Pick<NatsConnection, 'flush'>;
  readonly storage: Pick<Storage, 'toRow' | 'writeRows'>;
  /** The consumers' ack wait (milliseconds): a batch in hand is kept alive (`working`) well within it. */
  readonly ackWaitMs: number;
  /** Delay between retries of a transient storage failure. */
  readonly backoff: BackoffOptions;
  readonly deadLetters: DeadLetterPolicy;
  /** The worker's loop: its backoff waits, and whether a forced shutdown ended the retries. */
  readonly loop: Pick<StoppableLoop, 'backoff' | 'aborted'>;
  /** Told every commit and every transient failure (`sluice_storage_up` follows them); none by default. */
  readonly health?: WriteHealth;
  /**
   * `SLUICE_NATS_MAX_AGE` (milliseconds): a message the stream stored longer ago than this is acked
   * unwritten and its events counted as expired. None: every message is written, however old.
   */
  readonly maxAgeMs?: number;
  /** Against the stream's store time of a message (`maxAgeMs`). Default the system clock. */
  readonly clock?: Clock;
  readonly metrics: Metrics;
  readonly queueMetrics: QueueMetrics;
  readonly logger: Logger;
  /** The loss map's counts of expired events (`OutcomeRecorder.count`); none when absent. */
  readonly outcomes?: CountSink;
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
  /** The event's app, `ts` and type, and its message's origin: a copy storage held is counted by them. */
  readonly app: string;
  readonly ts: number;
  readonly type: string;
  readonly origin: OutcomeOrigin;
}

/**
 * Settles a pulled batch: decodes each message, keeps the batch alive (`working`) while it is
 * written, writes every event through `writeWithRetry` — the collector's writer's own write path
 * and `(id, ts)` dedupe — and acks each message only after the commit of all its events; what
 * failed in a message goes to the dead-letter policy.
 */
export class BatchSettler {
  constructor(private readonly o: BatchSettlerOptions) {}

  async settle(batch: readonly Fetched[], slot: Slot): Promise<void> {
    const { queueMetrics, ackWaitMs, storage, deadLetters } = this.o;
    const started = process.hrtime.bigint();
    slot.inHand = batch.length;
    slot.prefetched = [];
    queueMetrics.workerBatchSize.observe(batch.length);
    const messages: InHand[] = [];
    const items: EventItem[] = [];
    const expired = { messages: 0, events: 0 };
    for (const fetched of batch) {
      const { msg, lane } = fetched;
      const count = msg.info.deliveryCount;
      if (count > 1) queueMetrics.redeliveries.inc({ consumer: lane });
      if (deadLetters.exhausted(fetched)) {
        const detail = `delivered ${count} times without an ack`;
        await deadLetters.giveUp({
          fetched,
          failures: [{ reason: 'max_deliveries', detail, data: msg.data }],
        });
        continue;
      }
      const events = decodeEvents(msg.data);
      const expiredEvents = events === null ? null : this.expire(fetched, events);
      if (expiredEvents !== null) {
        expired.messages++;
        expired.events += expiredEvents;
        continue;
      }
      if (events === null) {
        const detail = unreadableDetail(msg.data);
        await deadLetters.failed({ fetched, failures: [{ reason: 'unparseable', detail, data: msg.data }] });
        continue;
      }
      const message: InHand = { fetched, failures: [] };
      messages.push(message);
      // A redelivered message's copies in storage are most likely its own earlier delivery's, not a
      // sender's resend: written as of no known origin, the loss map leaves them out of `duplicate`
      // (both here and where the merge job removes a metric sample's copy). A resend redelivered
      // before any write of it committed is then not counted `duplicate`: it stays pending.
      const origin = count === 1 ? originOfHeader(msg.header(ORIGIN_HEADER)) : '';
      for (let index = 0; index < events.length; index++) {
        const event = events[index];
        if (event === null || event === undefined) message.failures.push(unparseableElement(msg.data, index));
        else {
          const { app, ts, type } = event;
          items.push({ row: storage.toRow(event), lane, index, message, app, ts, type, origin });
        }
      }
    }
    if (expired.messages > 0) {
      this.o.logger.warn(
        { ...expired, maxAgeMs: this.o.maxAgeMs },
        'messages older than SLUICE_NATS_MAX_AGE acked unwritten; their events counted as expired',
      );
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
            await deadLetters.failed(m);
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
   * A message past `maxAgeMs`, delivered for the first time, is acked unwritten and its events are counted as lost (`expired`,
   * `max_age`); returns how many, or null when the message is younger. The age is the stream's,
   * so this is where `SLUICE_NATS_MAX_AGE` is enforced: the stream itself keeps messages longer
   * (`streamMaxAgeMs`), because what it removes on its own is gone unread, and its events could
   * never be counted.
   */
  private expire(fetched: Fetched, events: ReadonlyArray<TelemetryEvent | null>): number | null {
    const { maxAgeMs, clock, queueMetrics, outcomes } = this.o;
    // Only on its first delivery: a message delivered before was in a worker's hands within the
    // max age, and some of its events may be stored already (counting them expired would count
    // them twice); it is written, the dedupe skipping what is.
    if (maxAgeMs === undefined || fetched.msg.info.deliveryCount > 1) return null;
    if ((clock?.now() ?? Date.now()) - fetched.msg.info.storedAtMs <= maxAgeMs) return null;
    const subjects: OutcomeSubject[] = [];
    for (const e of events) if (e) subjects.push(e);
    if (outcomes) countEvents(outcomes, subjects, (s) => s, 'expired', 'max_age', '');
    queueMetrics.eventsExpired.inc(subjects.length);
    // Counted, then acked (as dead letters are): a lost ack delivers it again and counts it twice;
    // the other order would lose the count with a worker that dies in between.
    fetched.msg.ack();
    queueMetrics.messagesAcked.inc({ consumer: fetched.lane });
    return subjects.length;
  }

  /**
   * Writes until committed (see `writeWithRetry`); the events the database refuses are noted
   * against their message. False when `abort` ended the retries.
   */
  private async write(items: EventItem[]): Promise<boolean> {
    const { storage, metrics, logger, backoff, loop, outcomes } = this.o;
    const outcome = await writeWithRetry(items, {
      write: (rows, origins) => storage.writeRows(rows, origins),
      onStored: (part, result) => {
        // As the writer of tiers 1–3: a copy storage already held (a resend past the stream's
        // duplicate window) is counted `duplicate` under its request's origin.
        if (outcomes) countSkippedCopies(outcomes, part, result);
      },
      onRefused: (item, err) => {
        const event = eventAt(item);
        item.message.failures.push({
          reason: 'storage_rejected',
          detail: err instanceof Error ? err.message : String(err),
          data: encodeEvent(event),
          event: { index: item.index, id: event.id },
          subject: { app: event.app, ts: event.ts, type: event.type },
        });
      },
      backoff,
      sleep: (ms) => loop.backoff(ms),
      aborted: () => loop.aborted,
      ...(this.o.health && { health: this.o.health }),
      metrics,
      logger,
    });
    return outcome.settled;
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
