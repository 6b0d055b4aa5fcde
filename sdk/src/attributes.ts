import { CAPTURE_LIMITS, truncate } from './limits';
import type { AttributeValue, Attributes } from './types';

/** Keys the collector rejects: they would reach an object's prototype chain. */
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * The attributes the wire contract allows, from whatever the host passed:
 * string, finite number and boolean values are kept (strings cut to the
 * length limit); other values, reserved or over-long keys and attributes
 * past the count limit are dropped. Returns `undefined` when nothing is left.
 * The result is a plain object: with `__proto__` dropped no key can reach its
 * prototype, and V8 keeps plain objects fast (a null-prototype object is a
 * slow dictionary, several times slower to build, key and serialise).
 */
export function sanitizeAttributes(raw: unknown): Attributes | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  let out: Record<string, AttributeValue> | undefined;
  let n = 0;
  for (const key of Object.keys(raw)) {
    if (key.length === 0 || key.length > CAPTURE_LIMITS.maxAttributeKeyLength || RESERVED_KEYS.has(key))
      continue;
    let value = (raw as Record<string, unknown>)[key];
    if (typeof value === 'string') value = truncate(value, CAPTURE_LIMITS.maxStringLength);
    else if (!(typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value)))) continue;
    out ??= {};
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
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1]! > keys[i]!) {
      keys.sort(); // hosts usually write attributes in one order: sort only when needed
      break;
    }
  }
  let key = name;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const v = attributes[k];
    key +=
      (typeof v === 'string' ? '\u0000s' : typeof v === 'number' ? '\u0000n' : '\u0000b') + k + '\u0001' + v;
  }
  return key;
}

/** Whether two sanitized attribute sets are equal, whatever their key order. */
export function sameAttributes(a: Attributes | undefined, b: Attributes | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    if (a[k] !== b[k] || !Object.prototype.hasOwnProperty.call(b, k)) return false;
  }
  return true;
}
