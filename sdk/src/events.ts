import { CAPTURE_LIMITS, isValidName, truncate } from './limits';
import type { Source, WireError, WireEvent } from './types';

/** Keys, quotes and punctuation of an event around its variable parts (characters), rounded up. */
const EVENT_OVERHEAD = 96;
/** A number's JSON, rounded up. */
const NUMBER_CHARS = 24;

/** The `source` object shared by every event of one client. */
export function makeSource(app: string, version: string | undefined, env: string | undefined): Source {
  const source: { app: string; version?: string; env?: string } = { app };
  if (version !== undefined) source.version = version;
  if (env !== undefined) source.env = env;
  return source;
}

/** JSON size of `source` (characters). */
export function sourceChars(source: Source): number {
  return (
    12 +
    source.app.length +
    (source.version ? source.version.length + 13 : 0) +
    (source.env ? source.env.length + 9 : 0)
  );
}

/**
 * Estimated JSON size of an event (characters), what the buffer and batch
 * bounds count. Close to `JSON.stringify(event).length` for ASCII text, and
 * far cheaper; the bounds are memory guards, not exact quotas.
 */
export function estimateChars(event: WireEvent, sourceLength: number): number {
  let n = EVENT_OVERHEAD + sourceLength + event.name.length;
  if (event.value !== undefined) n += NUMBER_CHARS;
  if (event.summary !== undefined) n += 40 + 5 * NUMBER_CHARS;
  if (event.message !== undefined) n += 12 + event.message.length;
  if (event.error !== undefined) {
    const e = event.error;
    n += 24 + e.message.length + (e.kind ? e.kind.length + 9 : 0) + (e.stack ? e.stack.length * 1.1 + 10 : 0);
  }
  const attributes = event.attributes;
  if (attributes !== undefined) {
    n += 15;
    for (const key in attributes) {
      const v = attributes[key];
      n += key.length + 4 + (typeof v === 'string' ? v.length + 2 : NUMBER_CHARS);
    }
  }
  return Math.ceil(n);
}

/**
 * The `error` field of whatever was thrown: an `Error`'s message, name (as
 * `kind`) and stack; a string as the message; otherwise its `message`
 * property or `String(value)`. Cut to the collector's length limits.
 */
export function describeError(err: unknown): WireError {
  let message: string;
  let kind: string | undefined;
  let stack: string | undefined;
  if (typeof err === 'string') {
    message = err;
  } else if (typeof err === 'object' && err !== null) {
    const e = err as { message?: unknown; name?: unknown; stack?: unknown };
    message = typeof e.message === 'string' ? e.message : safeString(err);
    if (typeof e.name === 'string' && e.name.length > 0) kind = e.name;
    else if (typeof err.constructor?.name === 'string' && err.constructor.name !== 'Object')
      kind = err.constructor.name;
    if (typeof e.stack === 'string' && e.stack.length > 0) stack = e.stack;
  } else {
    message = safeString(err);
  }
  const out: { message: string; kind?: string; stack?: string } = {
    message: truncate(message, CAPTURE_LIMITS.maxStringLength),
  };
  if (kind !== undefined) out.kind = truncate(kind, CAPTURE_LIMITS.maxKindLength);
  if (stack !== undefined) out.stack = truncate(stack, CAPTURE_LIMITS.maxStackLength);
  return out;
}

/** An error event's `name`: its kind as a dotted identifier (`TypeError`, `PaymentError`), else `error`. */
export function errorName(detail: WireError): string {
  const name = (detail.kind ?? '').replace(/[^A-Za-z0-9_.-]+/g, '_').replace(/^\.+|\.+$|\.(?=\.)/g, '');
  const cut = truncate(name, CAPTURE_LIMITS.maxNameLength);
  return isValidName(cut) ? cut : 'error';
}

function safeString(v: unknown): string {
  try {
    return String(v);
  } catch {
    return 'unprintable value';
  }
}
