import { headers, type JetStreamClient, type JsMsg } from 'nats';
import type { QueueTopology } from './topology';

/** Why a message was given up on; the `reason` label of `sluice_queue_dead_letters_total`. */
export type DeadLetterReason = 'unparseable' | 'storage_rejected' | 'max_deliveries';

/** Headers a dead letter carries, besides the original payload, for whoever inspects `<stream>_DEAD`. */
export const DEAD_LETTER_HEADERS = {
  reason: 'Sluice-Dead-Reason',
  detail: 'Sluice-Dead-Detail',
  subject: 'Sluice-Original-Subject',
  sequence: 'Sluice-Original-Sequence',
  deliveries: 'Sluice-Deliveries',
} as const;

/** Header values may not hold CR or LF; a long error message is cut. */
function headerValue(s: string): string {
  return s.replace(/[\r\n]+/g, ' ').slice(0, 256);
}

/**
 * Publishes `msg`'s payload to the dead-letter subject and waits for JetStream's ack. The
 * message id is the original stream sequence, so publishing it again (the worker died before
 * acking the original) stores it once. The caller acks the original only after this resolves.
 */
export async function publishDeadLetter(
  js: JetStreamClient,
  topology: QueueTopology,
  msg: JsMsg,
  reason: DeadLetterReason,
  detail: string,
  timeoutMs: number,
): Promise<void> {
  const h = headers();
  h.set(DEAD_LETTER_HEADERS.reason, reason);
  h.set(DEAD_LETTER_HEADERS.detail, headerValue(detail));
  h.set(DEAD_LETTER_HEADERS.subject, msg.subject);
  h.set(DEAD_LETTER_HEADERS.sequence, String(msg.info.streamSequence));
  h.set(DEAD_LETTER_HEADERS.deliveries, String(msg.info.deliveryCount));
  await js.publish(topology.deadLetterSubject, msg.data, {
    msgID: `${msg.info.stream}:${msg.info.streamSequence}`,
    headers: h,
    timeout: timeoutMs,
  });
}
