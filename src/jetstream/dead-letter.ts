import type { JetStreamClient } from '@nats-io/jetstream';
import { headers } from '@nats-io/nats-core';
import type { PulledMessage } from './pulled-message';
import type { QueueTopology } from './topology';
import type { OutcomeSubject } from '../loss-map/event-outcomes';

/** Why something was given up on; the `reason` label of `sluice_queue_dead_letters_total`. */
export const DEAD_LETTER_REASONS = ['unparseable', 'storage_rejected', 'max_deliveries'] as const;
export type DeadLetterReason = (typeof DEAD_LETTER_REASONS)[number];

/** Headers a dead letter carries, besides its payload, for whoever inspects `<stream>_DEAD`. */
export const DEAD_LETTER_HEADERS = {
  reason: 'Sluice-Dead-Reason',
  detail: 'Sluice-Dead-Detail',
  subject: 'Sluice-Original-Subject',
  sequence: 'Sluice-Original-Sequence',
  deliveries: 'Sluice-Deliveries',
  /** The event's id, when the dead letter is one event of a message. */
  eventId: 'Sluice-Event-Id',
} as const;

/** What is dead-lettered: the whole message, or one event of it (its own JSON as the payload). */
export interface DeadLetter {
  readonly reason: DeadLetterReason;
  readonly detail: string;
  readonly data: Uint8Array;
  /** The event's position in its message and its id; absent for the whole message. */
  readonly event?: { readonly index: number; readonly id: string | null };
  /** The event's app, `ts` and type, when it could be read: the loss map counts it by them. */
  readonly subject?: OutcomeSubject;
}

/** Header values may not hold CR or LF; a long error message is cut. */
function headerValue(s: string): string {
  return s.replace(/[\r\n]+/g, ' ').slice(0, 256);
}

/**
 * Publishes a dead letter of `msg` to the dead-letter subject and waits for JetStream's ack. The
 * message id is the original stream sequence (and the event's index in it), so publishing it
 * again (the worker died before acking the original) stores it once. The caller acks the
 * original only after this resolves.
 */
export async function publishDeadLetter(
  js: Pick<JetStreamClient, 'publish'>,
  topology: QueueTopology,
  msg: PulledMessage,
  letter: DeadLetter,
  timeoutMs: number,
): Promise<void> {
  const h = headers();
  h.set(DEAD_LETTER_HEADERS.reason, letter.reason);
  h.set(DEAD_LETTER_HEADERS.detail, headerValue(letter.detail));
  h.set(DEAD_LETTER_HEADERS.subject, msg.subject);
  h.set(DEAD_LETTER_HEADERS.sequence, String(msg.info.streamSequence));
  h.set(DEAD_LETTER_HEADERS.deliveries, String(msg.info.deliveryCount));
  if (letter.event?.id) h.set(DEAD_LETTER_HEADERS.eventId, letter.event.id);
  const part = letter.event === undefined ? '' : `:${letter.event.index}`;
  await js.publish(topology.deadLetterSubject, letter.data, {
    msgID: `${msg.info.stream}:${msg.info.streamSequence}${part}`,
    headers: h,
    timeout: timeoutMs,
  });
}
