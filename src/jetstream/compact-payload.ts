import { EVENT_TYPES, type AttributeValue, type EventType, type TelemetryEvent } from '../events/types';
import { isLowerCaseUuid } from '../events/uuid';

/**
 * Payload format 2 of an event message, what collectors publish: a JSON array whose first
 * element is the format version, then one array per event with its fields by position:
 *
 *     [2, [id, type, name, ts, app, version, env, value, summary, error, message, attributes], …]
 *
 * `summary` is null or `[count, min, max, sum, avg]`, `error` null or `[message, kind, stack]`,
 * `attributes` a flat `[key, value, key, value, …]` list in the event's key order. No field names:
 * a third fewer bytes than an array of event objects (format 1, which workers still read), a
 * cheaper `JSON.stringify` for the collector and a cheaper `JSON.parse` and shape check for the
 * worker. A payload never starts with a number in format 1, so the version tells them apart.
 */
export const COMPACT_FORMAT = 2;

/** Fields per event array. */
const FIELDS = 12;
const TYPES = new Set<string>(EVENT_TYPES);

/** `e` as its format-2 array (for `JSON.stringify`). */
export function compactEvent(e: TelemetryEvent): unknown[] {
  const s = e.summary;
  const err = e.error;
  const attributes: AttributeValue[] = [];
  for (const key in e.attributes) attributes.push(key, e.attributes[key] as AttributeValue);
  return [
    e.id,
    e.type,
    e.name,
    e.ts,
    e.app,
    e.version,
    e.env,
    e.value,
    s === null ? null : [s.count, s.min, s.max, s.sum, s.avg],
    err === null ? null : [err.message, err.kind, err.stack],
    e.message,
    attributes,
  ];
}

const stringOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string';
const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * The event of a format-2 array, or null when `t` is not one (a poison element). Collectors
 * publish only events that passed validation, so this checks the shape `writeRows` needs, not the
 * wire contract's limits again.
 */
export function eventFromCompact(t: unknown): TelemetryEvent | null {
  if (!Array.isArray(t) || t.length !== FIELDS) return null;
  const id: unknown = t[0];
  const type: unknown = t[1];
  const name: unknown = t[2];
  const ts: unknown = t[3];
  const app: unknown = t[4];
  const version: unknown = t[5];
  const env: unknown = t[6];
  const value: unknown = t[7];
  const summary: unknown = t[8];
  const error: unknown = t[9];
  const message: unknown = t[10];
  const flat: unknown = t[11];
  if (typeof id !== 'string' || !isLowerCaseUuid(id)) return null;
  if (typeof type !== 'string' || !TYPES.has(type)) return null;
  if (typeof name !== 'string' || typeof app !== 'string') return null;
  if (typeof ts !== 'number' || !Number.isSafeInteger(ts)) return null;
  if (!stringOrNull(version) || !stringOrNull(env) || !stringOrNull(message)) return null;
  if (value !== null && !finite(value)) return null;
  let parsedSummary: TelemetryEvent['summary'] = null;
  if (summary !== null) {
    if (!Array.isArray(summary) || summary.length !== 5) return null;
    const [count, min, max, sum, avg] = summary as unknown[];
    if (!Number.isSafeInteger(count) || !finite(min) || !finite(max) || !finite(sum) || !finite(avg)) {
      return null;
    }
    parsedSummary = { count: count as number, min, max, sum, avg };
  }
  let parsedError: TelemetryEvent['error'] = null;
  if (error !== null) {
    if (!Array.isArray(error) || error.length !== 3) return null;
    const [errorMessage, kind, stack] = error as unknown[];
    if (typeof errorMessage !== 'string' || !stringOrNull(kind) || !stringOrNull(stack)) return null;
    parsedError = { message: errorMessage, kind, stack };
  }
  if ((type === 'error') !== (parsedError !== null)) return null;
  if (!Array.isArray(flat) || flat.length % 2 !== 0) return null;
  // Null prototype, as validation builds them: no key can reach Object.prototype.
  const attributes: Record<string, AttributeValue> = Object.create(null);
  for (let i = 0; i < flat.length; i += 2) {
    const key: unknown = flat[i];
    const v: unknown = flat[i + 1];
    if (typeof key !== 'string') return null;
    if (typeof v !== 'string' && typeof v !== 'boolean' && !finite(v)) return null;
    attributes[key] = v;
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
    attributes,
  };
}
