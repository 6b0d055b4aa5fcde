import type { JetStreamClient } from '@nats-io/jetstream';
import type { TelemetryEvent } from '../events/types';
import type { Logger } from '../log/logger';
import type { QueueMetrics } from '../metrics/queue-instruments';
import type { Fetched } from './batch-puller';
import { publishDeadLetter, type DeadLetter } from './dead-letter';
import type { QueueTopology } from './topology';
import { decodeEvents } from './event-codec';
import { countEvents, type CountSink, type OutcomeSubject } from '../loss-map/event-outcomes';

/** A message being settled, and what of it failed (to hand back, or dead-letter at the last delivery). */
export interface InHand {
  readonly fetched: Fetched;
  readonly failures: DeadLetter[];
  /** Its events decoded again, once one of them was refused. */
  redecoded?: Array<TelemetryEvent | null> | null;
}

export interface DeadLetterPolicyOptions {
  readonly js: Pick<JetStreamClient, 'publish'>;
  readonly topology: QueueTopology;
  /** Bound of a dead-letter publish (milliseconds). */
  readonly requestTimeoutMs: number;
  /** The consumers' ack wait (milliseconds): a hand-back is never delayed past it. */
  readonly ackWaitMs: number;
  /** Deliveries after which what keeps failing in a message goes to the dead-letter subject. */
  readonly maxDeliveries: number;
  readonly queueMetrics: QueueMetrics;
  readonly logger: Logger;
  /** The loss map's counts of dead-lettered events (`OutcomeRecorder.count`); none when absent. */
  readonly outcomes?: CountSink;
}

/** Longest delay of a handed-back message before its next delivery (milliseconds). */
const MAX_NAK_DELAY_MS = 5000;

/**
 * What becomes of a message that failed in part: handed back (nak with a growing delay) until
 * its delivery count reaches `maxDeliveries`, then each failure published to the dead-letter
 * subject and the message acked only after those publishes are acked.
 */
export class DeadLetterPolicy {
  constructor(private readonly o: DeadLetterPolicyOptions) {}

  /** True when a message was delivered more often than `maxDeliveries` (it killed its workers). */
  exhausted(fetched: Fetched): boolean {
    return fetched.msg.info.deliveryCount > this.o.maxDeliveries;
  }

  /** Part of this delivery failed for a reason a retry may not fix: hand it back, or give up after N. */
  async failed(m: InHand): Promise<void> {
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
  async giveUp(m: InHand): Promise<void> {
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
      this.count(letter, msg.data);
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

  /** The loss map: an event dead-lettered alone, or each event a whole dead-lettered message held. */
  private count(letter: DeadLetter, data: Uint8Array): void {
    const sink = this.o.outcomes;
    if (sink === undefined) return;
    let subjects: OutcomeSubject[] = [];
    if (letter.event !== undefined) subjects = letter.subject ? [letter.subject] : [];
    else for (const e of decodeEvents(data) ?? []) if (e) subjects.push(e);
    countEvents(sink, subjects, (s) => s, 'dead_lettered', letter.reason, '');
  }

  private nakDelay(deliveries: number): number {
    return Math.min(MAX_NAK_DELAY_MS, this.o.ackWaitMs, 250 * 2 ** Math.min(deliveries - 1, 10));
  }
}
