import { createHash } from 'node:crypto';
import type { TelemetryEvent } from '../events/types';
import type { LaneName } from '../pipeline/lane';

/** Header of every event message: how many events its payload holds (a worker sizes its batches by it). */
export const EVENT_COUNT_HEADER = 'Sluice-Events';

/** One message of events, ready to publish. */
export interface EventMessage {
  /** A JSON array of the normalised events (UTF-8). */
  readonly data: Uint8Array;
  /**
   * `Nats-Msg-Id`: a digest of the lane and of every event's `(id, ts)`, in order. The same events
   * published again (the client resent its request, or the collector's publish timed out after
   * JetStream stored it) make the same id, which JetStream drops within its duplicate window;
   * past it, the database's `(id, ts)` dedupe stores them once.
   */
  readonly msgId: string;
  readonly events: number;
}

const encoder = new TextEncoder();

/**
 * A request's events of one lane as few messages as the server's payload limit allows: usually
 * one. Events are encoded once each; a message closes before it would pass `maxPayloadBytes`
 * (an event larger than that alone still gets its own message, which the server refuses).
 */
export function eventMessages(
  lane: LaneName,
  events: readonly TelemetryEvent[],
  maxPayloadBytes: number,
): EventMessage[] {
  const messages: EventMessage[] = [];
  let parts: string[] = [];
  let digest = createHash('sha256').update(lane);
  let bytes = 2; // the brackets
  const close = (): void => {
    if (parts.length === 0) return;
    messages.push({
      data: encoder.encode(`[${parts.join(',')}]`),
      msgId: `${lane}-${digest.digest('base64url')}`,
      events: parts.length,
    });
    parts = [];
    digest = createHash('sha256').update(lane);
    bytes = 2;
  };
  for (const event of events) {
    const json = JSON.stringify(event);
    const size = Buffer.byteLength(json);
    if (parts.length > 0 && bytes + 1 + size > maxPayloadBytes) close();
    parts.push(json);
    bytes += size + 1;
    digest.update(`${event.id}/${event.ts};`);
  }
  close();
  return messages;
}
