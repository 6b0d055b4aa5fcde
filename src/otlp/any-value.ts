import type { OtlpAnyValue, OtlpKeyValue } from './model';
import { bytesBase64, has, int64Number, int64Text, list, record } from './scalars';

/** A decoded `AnyValue` as plain data: what arrays and bodies turn into JSON text as. */
export type PlainValue = string | number | boolean | null | PlainValue[] | { [key: string]: PlainValue };

/**
 * How deep `plainValue` follows arrays and maps; deeper values read as null. The decoders bound
 * nesting already (JSON depth setting; protobufjs's recursion limit of 100); this keeps the walk
 * over a permitted body short.
 */
const MAX_NESTING = 16;

/** An `AnyValue` as plain data: 64-bit integers beyond 2^53 as decimal text, bytes as base64. */
export function plainValue(v: OtlpAnyValue | null | undefined, depth = 0): PlainValue {
  const value = record<OtlpAnyValue>(v);
  if (value === null || depth > MAX_NESTING) return null;
  if (has(value, 'stringValue')) return typeof value.stringValue === 'string' ? value.stringValue : null;
  if (has(value, 'boolValue')) return value.boolValue === true;
  if (has(value, 'intValue')) return safeInteger(value.intValue);
  if (has(value, 'doubleValue')) {
    const d = value.doubleValue;
    return typeof d === 'number' && Number.isFinite(d) ? d : null;
  }
  if (has(value, 'arrayValue')) {
    return list<OtlpAnyValue>(record<{ values?: unknown }>(value.arrayValue)?.values).map((x) =>
      plainValue(x, depth + 1),
    );
  }
  if (has(value, 'kvlistValue')) {
    const out: { [key: string]: PlainValue } = Object.create(null) as { [key: string]: PlainValue };
    for (const kv of list<OtlpKeyValue>(record<{ values?: unknown }>(value.kvlistValue)?.values)) {
      if (typeof kv?.key === 'string' && !(kv.key in out)) out[kv.key] = plainValue(kv.value, depth + 1);
    }
    return out;
  }
  if (has(value, 'bytesValue')) return bytesBase64(value.bytesValue);
  return null;
}

/** A 64-bit integer as a number when exact, else as its decimal text. */
export function safeInteger(v: unknown): number | string {
  const n = int64Number(v);
  return Number.isSafeInteger(n) ? n : int64Text(v);
}

/** An `AnyValue` as one line of text: a string as it is, anything else as JSON. '' when empty. */
export function valueText(v: OtlpAnyValue | null | undefined): string {
  const plain = plainValue(v);
  if (plain === null) return '';
  return typeof plain === 'string' ? plain : JSON.stringify(plain);
}
