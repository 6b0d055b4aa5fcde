import { createHash } from 'node:crypto';
import type { TelemetryEvent } from '../events/types';
import type { LaneName } from '../pipeline/lane';
import { COMPACT_FORMAT, compactEvent } from './compact-payload';

/** Header of every event message: how many events its payload holds (a worker sizes its batches by it). */
export const EVENT_COUNT_HEADER = 'Sluice-Events';

/** One message of events, ready to publish. */
export interface EventMessage {
  /** The events in payload format 2 (`compact-payload.ts`), UTF-8. */
  readonly data: Uint8Array;
  /**
   * `Nats-Msg-Id`: a digest of the lane and of every event's `(id, ts)`, in order. The same events
   * published again (the client resent its request, or the collector's publish timed out after
   * JetStream stored it) make the same id, which JetStream drops within its duplicate window;
   * past it, the database's `(id, ts)` dedupe stores them once. The payload format is not part of
   * it: a request resent across an upgrade is still a duplicate.
   */
  readonly msgId: string;
  readonly events: number;
}

function messageOf(lane: LaneName, events: readonly TelemetryEvent[], data: Buffer): EventMessage {
  let identity = '';
  for (const e of events) identity += `${e.id}/${e.ts};`;
  const digest = createHash('sha256').update(lane).update(identity).digest('base64url');
  return { data, msgId: `${lane}-${digest}`, events: events.length };
}

/**
 * A request's events of one lane as few messages as the server's payload limit allows: one,
 * encoded in one `JSON.stringify`, unless that passes `maxPayloadBytes`; then each event is
 * encoded alone and a message closes before it would pass the limit (an event larger than that
 * alone still gets its own message, which the server refuses).
 */
export function eventMessages(
  lane: LaneName,
  events: readonly TelemetryEvent[],
  maxPayloadBytes: number,
): EventMessage[] {
  if (events.length === 0) return [];
  const doc: unknown[] = [COMPACT_FORMAT];
  for (const e of events) doc.push(compactEvent(e));
  const whole = Buffer.from(JSON.stringify(doc), 'utf8');
  if (whole.length <= maxPayloadBytes || events.length === 1) return [messageOf(lane, events, whole)];
  return split(lane, events, maxPayloadBytes);
}

function split(lane: LaneName, events: readonly TelemetryEvent[], maxPayloadBytes: number): EventMessage[] {
  const head = `[${COMPACT_FORMAT}`;
  const messages: EventMessage[] = [];
  let parts: string[] = [];
  let from = 0;
  let bytes = head.length + 1; // the closing bracket
  events.forEach((e, i) => {
    const json = JSON.stringify(compactEvent(e));
    const size = Buffer.byteLength(json) + 1; // and its comma
    if (parts.length > 0 && bytes + size > maxPayloadBytes) {
      messages.push(messageOf(lane, events.slice(from, i), Buffer.from(`${head},${parts.join(',')}]`)));
      parts = [];
      from = i;
      bytes = head.length + 1;
    }
    parts.push(json);
    bytes += size;
  });
  messages.push(messageOf(lane, events.slice(from), Buffer.from(`${head},${parts.join(',')}]`)));
  return messages;
}
