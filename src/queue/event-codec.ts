import { EVENT_TYPES, type AttributeValue, type EventType, type TelemetryEvent } from '../events/types';

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });
const TYPES = new Set<string>(EVENT_TYPES);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** One validated event as a message payload (a dead letter): the normalised event as JSON (UTF-8). */
export function encodeEvent(event: TelemetryEvent): Uint8Array {
  return encoder.encode(JSON.stringify(event));
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const stringOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string';
const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * The events of a message payload: a JSON array of events (what collectors publish, see
 * `event-batches.ts`) or one event object (a single event, as a dead letter holds it). Null when
 * the payload is not JSON, or neither form; an element that is not an event (a poison element)
 * is null in its place, so its neighbours are still written.
 */
export function decodeEvents(data: Uint8Array): Array<TelemetryEvent | null> | null {
  let doc: unknown;
  try {
    doc = JSON.parse(decoder.decode(data));
  } catch {
    return null;
  }
  if (Array.isArray(doc)) return doc.map(eventFrom);
  if (!isObject(doc)) return null;
  const one = eventFrom(doc);
  return one === null ? null : [one];
}

/** The event of a single-event payload, or null when it is not one. */
export function decodeEvent(data: Uint8Array): TelemetryEvent | null {
  const events = decodeEvents(data);
  return events?.length === 1 ? (events[0] ?? null) : null;
}

/**
 * The event a collector published, or null when `doc` is not one (bad JSON shape, or a shape
 * `writeRows` could not store). Collectors publish only events that passed validation, so this
 * checks structure, not the wire contract's limits again.
 */
function eventFrom(doc: unknown): TelemetryEvent | null {
  if (!isObject(doc)) return null;
  const { id, type, name, ts, app, version, env, value, summary, error, message, attributes } = doc;
  if (typeof id !== 'string' || !UUID.test(id)) return null;
  if (typeof type !== 'string' || !TYPES.has(type)) return null;
  if (typeof name !== 'string' || typeof app !== 'string') return null;
  if (typeof ts !== 'number' || !Number.isSafeInteger(ts)) return null;
  if (!stringOrNull(version) || !stringOrNull(env) || !stringOrNull(message)) return null;
  if (value !== null && !finite(value)) return null;
  let parsedSummary: TelemetryEvent['summary'] = null;
  if (summary !== null) {
    if (!isObject(summary)) return null;
    const { count, min, max, sum, avg } = summary;
    if (!Number.isSafeInteger(count) || ![min, max, sum, avg].every(finite)) return null;
    parsedSummary = {
      count: count as number,
      min: min as number,
      max: max as number,
      sum: sum as number,
      avg: avg as number,
    };
  }
  let parsedError: TelemetryEvent['error'] = null;
  if (error !== null) {
    if (!isObject(error) || typeof error.message !== 'string') return null;
    if (!stringOrNull(error.kind) || !stringOrNull(error.stack)) return null;
    parsedError = { message: error.message, kind: error.kind, stack: error.stack };
  }
  if ((type === 'error') !== (parsedError !== null)) return null;
  if (!isObject(attributes)) return null;
  // Null prototype, as validation builds them: no key can reach Object.prototype.
  const attrs: Record<string, AttributeValue> = Object.create(null);
  for (const [k, v] of Object.entries(attributes)) {
    if (typeof v !== 'string' && typeof v !== 'boolean' && !finite(v)) return null;
    attrs[k] = v;
  }
  return {
    id,
    type: type as EventType,
    name,
    ts,
    app,
    version,
    env,
    value,
    summary: parsedSummary,
    error: parsedError,
    message,
    attributes: attrs,
  };
}
