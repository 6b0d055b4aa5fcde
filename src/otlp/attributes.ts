import { isAttributeKey } from '../events/attribute-key';
import { storableText } from '../events/cut-text';
import { sortKeys } from '../events/sort-keys';
import type { AttributeValue, Attributes } from '../events/types';
import { plainValue, safeInteger, type PlainValue } from './any-value';
import type { OtlpAnyValue, OtlpKeyValue } from './model';
import { bytesBase64, has, list, record } from './scalars';

/** The bounds of one event's attributes (the intake's limits: see src/events/limits.ts). */
export interface AttributeBounds {
  /** Most attributes per event. */
  readonly maxAttributes: number;
  /** Longest key (UTF-16 code units). */
  readonly maxKeyLength: number;
  /** Longest string value (UTF-16 code units). */
  readonly maxStringLength: number;
}

/** Deepest map nesting flattened into dotted keys; deeper maps are kept as JSON text. */
const MAX_MAP_DEPTH = 4;

/**
 * Builds the flat attributes of one Sluice event from OTLP key-values, within the intake's
 * limits and with the key rule of events/attribute-key.ts, so the event is built typed and valid.
 * The rule (docs/otlp.md):
 * - entries are admitted in order, the receiver's own (`trace_id`, …) first; the first of a key wins;
 * - strings, booleans and doubles as they are; integers as numbers, or decimal text beyond 2^53;
 *   bytes as base64 text; arrays as JSON text; maps flattened into `key.sub` entries (JSON text
 *   below 4 levels); empty values are skipped;
 * - a key that is empty, longer than the key limit, reserved or not text is dropped; a string
 *   value is made storable and cut (events/cut-text.ts, `storableText`);
 * - past the attribute limit, the rest is dropped. `dropped` counts what was dropped.
 * The result holds its keys in code-unit order, as validation does (events/validate.ts).
 */
export class AttributeBag {
  private readonly values: Record<string, AttributeValue> = Object.create(null) as Record<
    string,
    AttributeValue
  >;
  private count = 0;
  dropped = 0;

  constructor(private readonly bounds: AttributeBounds) {}

  get size(): number {
    return this.count;
  }

  /** Adds one scalar entry (the receiver's own, or a flattened one). */
  set(key: string, value: AttributeValue): void {
    if (key in this.values) return;
    if (!isAttributeKey(key, this.bounds.maxKeyLength) || this.count >= this.bounds.maxAttributes) {
      this.dropped++;
      return;
    }
    this.values[key] = typeof value === 'string' ? storableText(value, this.bounds.maxStringLength) : value;
    this.count++;
  }

  /** Adds OTLP key-values; `skip` names keys used elsewhere (e.g. `exception.*` read into an error). */
  addKeyValues(keyValues: unknown, skip?: (key: string) => boolean): void {
    for (const kv of list<OtlpKeyValue>(keyValues)) {
      const key = record<OtlpKeyValue>(kv)?.key;
      if (typeof key !== 'string' || skip?.(key)) continue;
      this.addValue(key, kv.value, 0);
    }
  }

  /** The attributes as validation holds them: keys in code-unit order, a null prototype. */
  toObject(): Attributes {
    const keys = Object.keys(this.values);
    sortKeys(keys);
    const out: Record<string, AttributeValue> = Object.create(null) as Record<string, AttributeValue>;
    for (const key of keys) out[key] = this.values[key] as AttributeValue;
    return out;
  }

  private addValue(key: string, v: OtlpAnyValue | null | undefined, depth: number): void {
    const value = record<OtlpAnyValue>(v);
    if (value === null) return;
    if (has(value, 'stringValue')) {
      if (typeof value.stringValue === 'string') this.set(key, value.stringValue);
    } else if (has(value, 'boolValue')) {
      this.set(key, value.boolValue === true);
    } else if (has(value, 'intValue')) {
      this.set(key, safeInteger(value.intValue));
    } else if (has(value, 'doubleValue')) {
      const d = value.doubleValue;
      if (typeof d === 'number' && Number.isFinite(d)) this.set(key, d);
      else this.dropped++;
    } else if (has(value, 'kvlistValue') && depth < MAX_MAP_DEPTH) {
      for (const kv of list<OtlpKeyValue>(record<{ values?: unknown }>(value.kvlistValue)?.values)) {
        const sub = record<OtlpKeyValue>(kv)?.key;
        if (typeof sub === 'string') this.addValue(`${key}.${sub}`, kv.value, depth + 1);
      }
    } else if (has(value, 'arrayValue') || has(value, 'kvlistValue')) {
      this.set(key, JSON.stringify(plainValue(value)));
    } else if (has(value, 'bytesValue')) {
      const b64 = bytesBase64(value.bytesValue);
      if (b64 !== null) this.set(key, b64);
    }
  }
}

/** The value of `key` among key-values, as plain data; undefined when absent. */
export function findValue(keyValues: unknown, key: string): PlainValue | undefined {
  for (const kv of list<OtlpKeyValue>(keyValues)) {
    if (record<OtlpKeyValue>(kv)?.key === key) return plainValue(kv.value);
  }
  return undefined;
}

/** The value of `key` as text ('' when absent; non-strings as JSON). */
export function findText(keyValues: unknown, key: string): string {
  const v = findValue(keyValues, key);
  if (v === undefined || v === null) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}
