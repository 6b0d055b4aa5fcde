import type { QueueMetrics } from '../metrics/queue-instruments';
import type { LaneName } from '../intake/event-sink';
import type { OutcomeOrigin } from '../loss-map/outcome';
import type { AsyncPublisher, PublishResult } from './async-publisher';
import {
  EVENT_COUNT_HEADER,
  ORIGIN_HEADER,
  PAYLOAD_ENVELOPE_BYTES,
  coalescedMessage,
  splitMessages,
  type EncodedEvents,
  type EventMessage,
} from './event-batches';

export interface CoalescingPublisherOptions {
  readonly lane: LaneName;
  /** The loss map's origin of every request this publisher takes (`ORIGIN_HEADER` of its messages). */
  readonly origin: OutcomeOrigin;
  readonly subject: string;
  readonly publisher: Pick<AsyncPublisher, 'publishAll'>;
  /** Largest payload the server takes (bytes, its `max_payload` less room for headers). */
  readonly maxPayloadBytes: () => number;
  /** Longest a request waits for the ack of the message holding its events (milliseconds). */
  readonly publishTimeoutMs: number;
  /**
   * Most messages of the lane awaiting their acks at once. Only the first leaves with whatever
   * waits; the others only once `targetBytes` wait (a full message), so that under load messages
   * fill up instead of leaving half empty.
   */
  readonly maxInFlight: number;
  /** A message takes no further request once its payload would pass this many bytes. */
  readonly targetBytes: number;
  readonly metrics: QueueMetrics;
}

/** A request's events waiting for a message, and how to answer it. */
interface Waiting {
  readonly part: EncodedEvents;
  settled: boolean;
  settle(outcomes: PublishResult[]): void;
}

/**
 * Group commit for one lane's publishes: while a message awaits its ack, the requests that arrive
 * wait and leave together, as one message of up to `targetBytes`, when the ack comes (or at once
 * as a further message in flight, up to `maxInFlight`, once a full message's worth waits). A lone
 * request goes out at once, alone; under load messages grow by themselves. JetStream's cost is mostly per message (on a replicated stream each one is a RAFT
 * proposal on every server), so this is what keeps R3 close to R1 (docs/CAPACITY.md).
 *
 * Each request gets the outcomes of the message(s) holding its events, or a timeout after
 * `publishTimeoutMs`, whichever comes first; a request that timed out while waiting is never
 * published afterwards. A message is all or nothing: when it fails, every request in it is
 * refused and resent by its client (the stream and the database dedupe what was stored).
 */
export class CoalescingPublisher {
  private readonly queue: Waiting[] = [];
  /** Bytes of the requests in `queue` not yet answered (those timed out are subtracted when skipped). */
  private queuedBytes = 0;
  private inFlight = 0;

  constructor(private readonly o: CoalescingPublisherOptions) {}

  /** Resolves, never rejects, with the outcome of every message carrying these events. */
  publish(part: EncodedEvents): Promise<PublishResult[]> {
    return new Promise<PublishResult[]>((resolve) => {
      const waiting: Waiting = {
        part,
        settled: false,
        settle(outcomes) {
          if (waiting.settled) return;
          waiting.settled = true;
          clearTimeout(timer);
          resolve(outcomes);
        },
      };
      const timer = setTimeout(() => waiting.settle([{ kind: 'timeout' }]), this.o.publishTimeoutMs);
      this.queue.push(waiting);
      this.queuedBytes += part.bytes;
      this.pump();
    });
  }

  private pump(): void {
    while (
      this.inFlight === 0 ||
      (this.inFlight < this.o.maxInFlight && this.queuedBytes >= this.o.targetBytes)
    ) {
      const batch = this.drain();
      if (batch.length === 0) return;
      void this.send(batch);
    }
  }

  /** The oldest waiting requests that fit one message (always at least one); those timed out are skipped. */
  private drain(): Waiting[] {
    const limit = Math.min(this.o.targetBytes, this.o.maxPayloadBytes()) - PAYLOAD_ENVELOPE_BYTES;
    const batch: Waiting[] = [];
    let bytes = 0;
    while (this.queue.length > 0) {
      const next = this.queue[0] as Waiting;
      if (next.settled) {
        this.queue.shift();
        this.queuedBytes -= next.part.bytes;
        continue;
      }
      if (batch.length > 0 && bytes + 1 + next.part.bytes > limit) break;
      batch.push(next);
      bytes += (batch.length > 1 ? 1 : 0) + next.part.bytes;
      this.queue.shift();
      this.queuedBytes -= next.part.bytes;
    }
    return batch;
  }

  private async send(batch: Waiting[]): Promise<void> {
    const { o } = this;
    this.inFlight++;
    try {
      const messages = this.messagesOf(batch);
      o.metrics.publishRequestsPerMessage.observe(batch.length / messages.length);
      const outcomes = await o.publisher.publishAll(
        o.subject,
        messages.map((m) => ({
          data: m.data,
          msgId: m.msgId,
          headers: { [EVENT_COUNT_HEADER]: String(m.events), [ORIGIN_HEADER]: o.origin },
        })),
        o.publishTimeoutMs,
      );
      for (const outcome of outcomes) {
        if (outcome.kind === 'stored' && outcome.duplicate) o.metrics.publishDuplicates.inc();
      }
      for (const w of batch) w.settle(outcomes);
    } finally {
      this.inFlight--;
      this.pump();
    }
  }

  /** One message for the batch; a lone request larger than the server takes is split as before. */
  private messagesOf(batch: readonly Waiting[]): EventMessage[] {
    const only = batch.length === 1 ? batch[0] : undefined;
    const maxPayload = this.o.maxPayloadBytes();
    if (only && only.part.bytes + PAYLOAD_ENVELOPE_BYTES > maxPayload) {
      return splitMessages(this.o.lane, only.part, maxPayload);
    }
    return [
      coalescedMessage(
        this.o.lane,
        batch.map((w) => w.part),
      ),
    ];
  }
}
