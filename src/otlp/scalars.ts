/**
 * Readers of OTLP scalars that accept both encodings (see model.ts). None throws: a value of the
 * wrong type reads as absent.
 */

/** protobufjs represents 64-bit integers as `Long` objects (from the `long` package). */
interface LongLike {
  readonly low: number;
  readonly high: number;
  readonly unsigned: boolean;
  toString(): string;
}

function isLong(v: unknown): v is LongLike {
  return typeof v === 'object' && v !== null && typeof (v as LongLike).low === 'number' && 'high' in v;
}

const DECIMAL = /^-?\d{1,20}$/;

/** A 64-bit integer as a canonical decimal string ('0' when absent or not an integer). */
export function int64Text(v: unknown): string {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? String(v) : '0';
  if (typeof v === 'string') return DECIMAL.test(v) ? String(BigInt(v)) : '0';
  if (isLong(v)) return v.toString();
  if (typeof v === 'bigint') return v.toString();
  return '0';
}

/** A 64-bit integer as a number (precision lost above 2^53); NaN when absent or not an integer. */
export function int64Number(v: unknown): number {
  if (typeof v === 'number') return Number.isInteger(v) ? v : NaN;
  if (typeof v === 'string') return DECIMAL.test(v) ? Number(v) : NaN;
  if (isLong(v))
    return v.unsigned ? (v.high >>> 0) * 4294967296 + (v.low >>> 0) : v.high * 4294967296 + (v.low >>> 0);
  return NaN;
}

/** A count (unsigned 64-bit): a non-negative safe integer, else null. */
export function countOf(v: unknown): number | null {
  const n = v === undefined || v === null ? 0 : int64Number(v);
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/**
 * A `fixed64` nanosecond timestamp as integer milliseconds since the epoch; 0 when absent or zero.
 * Computed on the decimal text: nanoseconds of today exceed 2^53. A JSON number that large has
 * already lost its last digits when parsed; milliseconds survive that.
 */
export function nanosToMs(v: unknown): number {
  if (typeof v === 'number') return Number.isFinite(v) && v > 0 ? Math.floor(v / 1e6) : 0;
  const text = int64Text(v);
  if (text === '0' || text.startsWith('-')) return 0;
  return text.length <= 6 ? 0 : Number(text.slice(0, -6));
}

/** A double: numbers, and the JSON spellings of special values are refused (Sluice stores finite values). */
export function finiteDouble(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

export function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

export function int32(v: unknown): number {
  return typeof v === 'number' && Number.isInteger(v) ? v : 0;
}

const HEX = /^[0-9a-fA-F]*$/;

/** A trace or span id as lower-case hex: bytes (protobuf) or hex text (JSON); '' when absent or all zero. */
export function idHex(v: unknown): string {
  let hex = '';
  if (v instanceof Uint8Array) hex = Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex');
  else if (typeof v === 'string' && v.length <= 64 && HEX.test(v)) hex = v.toLowerCase();
  return /^0*$/.test(hex) ? '' : hex;
}

/** Bytes of an `AnyValue` as base64 text: bytes (protobuf) or base64 already (JSON). */
export function bytesBase64(v: unknown): string | null {
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
  if (typeof v === 'string') return v;
  return null;
}

/** An array field, or an empty one. */
export function list<T>(v: unknown): readonly T[] {
  return Array.isArray(v) ? (v as T[]) : [];
}

/** Whether a message sets `key` (an own property, not the protobuf prototype's default; not null). */
export function has(o: unknown, key: string): boolean {
  return (
    typeof o === 'object' &&
    o !== null &&
    Object.prototype.hasOwnProperty.call(o, key) &&
    (o as Record<string, unknown>)[key] !== undefined &&
    (o as Record<string, unknown>)[key] !== null
  );
}

/** An object-typed field, or null. */
export function record<T extends object>(v: unknown): T | null {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as T) : null;
}
