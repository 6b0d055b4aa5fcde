import { createHash } from 'node:crypto';
import type { TelemetryEvent } from '../events/types';
import type { LaneName } from '../intake/event-sink';
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

/**
 * One request's events of a lane, encoded once when it is offered: the pieces a message is made of
 * (`coalescedMessage` joins those of several requests).
 */
export interface EncodedEvents {
  readonly events: readonly TelemetryEvent[];
  /** The events' format-2 arrays joined by commas: a message's payload without `[2,` and `]`. */
  readonly json: string;
  /** UTF-8 bytes of `json`. */
  readonly bytes: number;
  /** Every event's `id/ts;`, in order: what the message id digests. */
  readonly identity: string;
}

/** Bytes a payload adds around its events: `[2,` and `]`. */
export const PAYLOAD_ENVELOPE_BYTES = `[${COMPACT_FORMAT},]`.length;

export function encodeEvents(events: readonly TelemetryEvent[]): EncodedEvents {
  const arrays: unknown[] = [];
  let identity = '';
  for (const e of events) {
    arrays.push(compactEvent(e));
    identity += `${e.id}/${e.ts};`;
  }
  const json = JSON.stringify(arrays).slice(1, -1);
  return { events, json, bytes: Buffer.byteLength(json), identity };
}

function messageOf(lane: LaneName, identity: string, events: number, data: Buffer): EventMessage {
  const digest = createHash('sha256').update(lane).update(identity).digest('base64url');
  return { data, msgId: `${lane}-${digest}`, events };
}

/**
 * One message holding the events of `parts` in order (requests of one lane that arrived while
 * earlier messages awaited their acks). Its id digests all of them: the events of one request
 * published alone make the id `eventMessages` gives them.
 */
export function coalescedMessage(lane: LaneName, parts: readonly EncodedEvents[]): EventMessage {
  let identity = '';
  let events = 0;
  const json: string[] = [];
  for (const p of parts) {
    identity += p.identity;
    events += p.events.length;
    if (p.json.length > 0) json.push(p.json);
  }
  return messageOf(lane, identity, events, Buffer.from(`[${COMPACT_FORMAT},${json.join(',')}]`, 'utf8'));
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
  const whole = encodeEvents(events);
  if (whole.bytes + PAYLOAD_ENVELOPE_BYTES <= maxPayloadBytes || events.length === 1) {
    return [coalescedMessage(lane, [whole])];
  }
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
      messages.push(splitMessage(lane, events.slice(from, i), `${head},${parts.join(',')}]`));
      parts = [];
      from = i;
      bytes = head.length + 1;
    }
    parts.push(json);
    bytes += size;
  });
  messages.push(splitMessage(lane, events.slice(from), `${head},${parts.join(',')}]`));
  return messages;
}

function splitMessage(lane: LaneName, events: readonly TelemetryEvent[], payload: string): EventMessage {
  let identity = '';
  for (const e of events) identity += `${e.id}/${e.ts};`;
  return messageOf(lane, identity, events.length, Buffer.from(payload));
}
