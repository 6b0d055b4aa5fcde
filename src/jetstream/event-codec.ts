import { COMPACT_FORMAT, eventFromCompact } from './compact-payload';
import type { TelemetryEvent } from '../events/types';

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** One validated event as a message payload (a dead letter): the normalised event as a JSON object (UTF-8). */
export function encodeEvent(event: TelemetryEvent): Uint8Array {
  return encoder.encode(JSON.stringify(event));
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A message payload as JSON, or undefined when it is not UTF-8 JSON. */
function parsePayload(data: Uint8Array): unknown {
  try {
    return JSON.parse(decoder.decode(data)) as unknown;
  } catch {
    return undefined;
  }
}

/** The format version a payload declares (its leading number), or null for format 1. */
function formatOf(doc: unknown[]): number | null {
  return typeof doc[0] === 'number' ? doc[0] : null;
}

/**
 * The events of a message payload, in any format a collector has published: format 2 (what
 * collectors publish now, see `compact-payload.ts`), format 1 (a JSON array of event objects,
 * which messages published before format 2 hold) or one event object (a single event, as a dead
 * letter holds it). Null when the payload is not JSON, none of these forms, or a format this
 * worker does not know (`unreadableDetail` says which); an element that is not an event (a poison
 * element) is null in its place, so its neighbours are still written.
 */
export function decodeEvents(data: Uint8Array): Array<TelemetryEvent | null> | null {
  const doc = parsePayload(data);
  if (Array.isArray(doc)) {
    const format = formatOf(doc);
    if (format === null) return doc.map(eventFrom);
    if (format !== COMPACT_FORMAT) return null;
    const events = new Array<TelemetryEvent | null>(doc.length - 1);
    for (let i = 1; i < doc.length; i++) events[i - 1] = eventFromCompact(doc[i]);
    return events;
  }
  if (!isObject(doc)) return null;
  const one = eventFrom(doc);
  return one === null ? null : [one];
}

/** Why `decodeEvents` refused a payload, for its dead letter and the log. */
export function unreadableDetail(data: Uint8Array): string {
  const doc = parsePayload(data);
  if (Array.isArray(doc)) {
    const format = formatOf(doc);
    if (format !== null && format !== COMPACT_FORMAT) {
      return `payload format ${format} is not one this worker reads (it reads 1 and ${COMPACT_FORMAT}): upgrade the workers`;
    }
  }
  return 'payload is not JSON Sluice events';
}

/**
 * Element `index` of a payload's events (what `decodeEvents` made null), as its own JSON: the
 * payload of that element's dead letter.
 */
export function payloadElement(data: Uint8Array, index: number): Uint8Array {
  const doc = parsePayload(data);
  let element: unknown = null;
  if (Array.isArray(doc)) element = doc[formatOf(doc) === null ? index : index + 1];
  return encoder.encode(JSON.stringify(element) ?? 'null');
}

/** The event of a single-event payload, or null when it is not one. */
export function decodeEvent(data: Uint8Array): TelemetryEvent | null {
  const events = decodeEvents(data);
  return events?.length === 1 ? (events[0] ?? null) : null;
}

/**
 * The event of a format-1 object (as collectors published before format 2, and as dead letters
 * hold one), or null when `doc` is not one. Read by laying its fields out as a format-2 array,
 * so both formats pass the one shape check (`eventFromCompact`); a nested field of the wrong
 * kind becomes `false`, which that check refuses.
 */
function eventFrom(doc: unknown): TelemetryEvent | null {
  if (!isObject(doc)) return null;
  const { summary: s, error: err, attributes } = doc;
  const flat: unknown[] = [];
  if (isObject(attributes)) for (const [k, v] of Object.entries(attributes)) flat.push(k, v);
  return eventFromCompact([
    doc.id,
    doc.type,
    doc.name,
    doc.ts,
    doc.app,
    doc.version,
    doc.env,
    doc.value,
    s === null ? null : isObject(s) ? [s.count, s.min, s.max, s.sum, s.avg] : false,
    err === null ? null : isObject(err) ? [err.message, err.kind, err.stack] : false,
    doc.message,
    isObject(attributes) ? flat : false,
  ]);
}
