import { CAPTURE_LIMITS, truncate } from './limits';
import type { AttributeValue, Attributes } from './types';

/** Keys the collector rejects: they would reach an object's prototype chain. */
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * The attributes the wire contract allows, from whatever the host passed:
 * string, finite number and boolean values are kept (strings cut to the
 * length limit); other values, reserved or over-long keys and attributes
 * past the count limit are dropped. Returns `undefined` when nothing is left.
 * The result has a null prototype.
 */
export function sanitizeAttributes(raw: unknown): Attributes | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  let out: Record<string, AttributeValue> | undefined;
  let n = 0;
  for (const key of Object.keys(raw)) {
    if (key.length === 0 || key.length > CAPTURE_LIMITS.maxAttributeKeyLength || RESERVED_KEYS.has(key)) continue;
    let value = (raw as Record<string, unknown>)[key];
    if (typeof value === 'string') value = truncate(value, CAPTURE_LIMITS.maxStringLength);
    else if (!(typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value)))) continue;
    out ??= Object.create(null) as Record<string, AttributeValue>;
    out[key] = value as AttributeValue;
    if (++n >= CAPTURE_LIMITS.maxAttributes) break;
  }
  return out;
}

/**
 * Identity of a metric series: its name and attribute set, independent of
 * the order the attributes were written in. Values carry their type, so
 * `"1"` and `1` are different series.
 */
export function seriesKey(name: string, attributes: Attributes | undefined): string {
  if (attributes === undefined) return name;
  const keys = Object.keys(attributes);
  if (keys.length > 1) keys.sort();
  let key = name;
  for (const k of keys) {
    const v = attributes[k]!;
    key += '\u0000' + k + '\u0001' + (typeof v === 'string' ? 's' : typeof v === 'number' ? 'n' : 'b') + String(v);
  }
  return key;
}
