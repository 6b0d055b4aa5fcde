import { createHash } from 'node:crypto';
import type { TelemetryEvent } from '../events/types';
import type { LaneName } from '../intake/event-sink';
import type { OutcomeOrigin } from '../loss-map/outcome';
import { COMPACT_FORMAT, compactEvent } from './compact-payload';

/** Header of every event message: how many events its payload holds (a worker sizes its batches by it). */
export const EVENT_COUNT_HEADER = 'Sluice-Events';

/**
 * Header of every event message: the loss map's origin of the requests its events came with
 * (`sdk` or `direct`; a message holds requests of one origin). The worker counts a copy storage
 * already held under it, as the writer of tiers 1–3 does.
 */
export const ORIGIN_HEADER = 'Sluice-Origin';

/** The origin a message's header names; `''` (not known) for none or another value. */
export function originOfHeader(value: string | undefined): OutcomeOrigin {
  return value === 'sdk' || value === 'direct' ? value : '';
}

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
  /** Each event's format-2 array (JSON, UTF-8), in order. */
  readonly elements: readonly Uint8Array[];
  /** Each event's `id/ts;`, in order: what the message id digests. */
  readonly identities: readonly string[];
  /** Bytes of the elements joined by commas: a message's payload without `[2,` and `]`. */
  readonly bytes: number;
}

/** Bytes a payload adds around its events: `[2,` and `]`. */
export const PAYLOAD_ENVELOPE_BYTES = `[${COMPACT_FORMAT},]`.length;

/** An event ready for a message: its identity and its format-2 array, already JSON. */
export interface EncodedEvent {
  readonly id: string;
  readonly ts: number;
  readonly element: Uint8Array;
}

/** Events whose elements are made (by the single pass, or `compactElement`), as a message's piece. */
export function encodedEvents(events: readonly EncodedEvent[]): EncodedEvents {
  const elements: Uint8Array[] = [];
  const identities: string[] = [];
  let bytes = events.length > 0 ? events.length - 1 : 0;
  for (const e of events) {
    elements.push(e.element);
    identities.push(`${e.id}/${e.ts};`);
    bytes += e.element.byteLength;
  }
  return { elements, identities, bytes };
}

/** A typed event's format-2 array, JSON in UTF-8. */
export function compactElement(e: TelemetryEvent): Uint8Array {
  return Buffer.from(JSON.stringify(compactEvent(e)));
}

export function encodeEvents(events: readonly TelemetryEvent[]): EncodedEvents {
  return encodedEvents(events.map((e) => ({ id: e.id, ts: e.ts, element: compactElement(e) })));
}

function messageOf(lane: LaneName, identity: string, events: number, data: Buffer): EventMessage {
  const digest = createHash('sha256').update(lane).update(identity).digest('base64url');
  return { data, msgId: `${lane}-${digest}`, events };
}

const HEAD = Buffer.from(`[${COMPACT_FORMAT}`);

/** `[2,e1,e2,…]` of the elements, in one buffer. */
function payloadOf(elements: readonly Uint8Array[]): Buffer {
  let size = HEAD.length + 1;
  for (const e of elements) size += e.byteLength + 1;
  const out = Buffer.allocUnsafe(size);
  let at = HEAD.copy(out, 0);
  for (const e of elements) {
    out[at++] = 0x2c;
    out.set(e, at);
    at += e.byteLength;
  }
  out[at] = 0x5d;
  return out;
}

/**
 * One message holding the events of `parts` in order (requests of one lane that arrived while
 * earlier messages awaited their acks). Its id digests all of them: the events of one request
 * published alone make the id `eventMessages` gives them.
 */
export function coalescedMessage(lane: LaneName, parts: readonly EncodedEvents[]): EventMessage {
  let identity = '';
  const elements: Uint8Array[] = [];
  for (const p of parts) {
    for (const id of p.identities) identity += id;
    for (const e of p.elements) elements.push(e);
  }
  return messageOf(lane, identity, elements.length, payloadOf(elements));
}

/**
 * A request's events of one lane as few messages as the server's payload limit allows: one,
 * unless that passes `maxPayloadBytes`; then a message closes before it would pass the limit (an
 * event larger than that alone still gets its own message, which the server refuses).
 */
export function splitMessages(lane: LaneName, part: EncodedEvents, maxPayloadBytes: number): EventMessage[] {
  if (part.elements.length === 0) return [];
  if (part.bytes + PAYLOAD_ENVELOPE_BYTES <= maxPayloadBytes || part.elements.length === 1) {
    return [coalescedMessage(lane, [part])];
  }
  const messages: EventMessage[] = [];
  let from = 0;
  let bytes = HEAD.length + 1; // the closing bracket
  const close = (to: number): void => {
    const identity = part.identities.slice(from, to).join('');
    messages.push(messageOf(lane, identity, to - from, payloadOf(part.elements.slice(from, to))));
  };
  part.elements.forEach((e, i) => {
    const size = e.byteLength + 1; // and its comma
    if (i > from && bytes + size > maxPayloadBytes) {
      close(i);
      from = i;
      bytes = HEAD.length + 1;
    }
    bytes += size;
  });
  close(part.elements.length);
  return messages;
}

/** `splitMessages` of typed events. */
export function eventMessages(
  lane: LaneName,
  events: readonly TelemetryEvent[],
  maxPayloadBytes: number,
): EventMessage[] {
  return splitMessages(lane, encodeEvents(events), maxPayloadBytes);
}
