import { list, record } from '../otlp/scalars';
import type { SentryException, SentryFrame } from './model';

/** Frames written into a stack: the most recent ones (the rest would be cut by the stack limit). */
const MAX_FRAMES = 200;

/**
 * The primary exception of an event's `exception` (the last of its values: Sentry lists a chain
 * from the cause to the exception raised last), or null when it has none.
 */
export function exceptionsOf(exception: unknown): readonly SentryException[] {
  const values = Array.isArray(exception)
    ? exception
    : list<unknown>(record<{ values?: unknown }>(exception)?.values);
  return values.flatMap((v) => {
    const e = record<SentryException>(v);
    return e === null ? [] : [e];
  });
}

/**
 * A stack trace as text, in the form the console and the error groups show (JavaScript's): the
 * head line `Type: value`, then the frames most recent first (Sentry lists them oldest first),
 * `    at function (file:line:column)`. The causes of a chain follow, each headed `Caused by:`.
 */
export function stackText(chain: readonly SentryException[]): string {
  const blocks: string[] = [];
  for (let i = chain.length - 1; i >= 0; i--) {
    const e = chain[i] as SentryException;
    const head = headLine(e);
    const frames = list<unknown>(record<{ frames?: unknown }>(e.stacktrace)?.frames);
    const lines = [i === chain.length - 1 ? head : `Caused by: ${head}`];
    for (let f = frames.length - 1; f >= 0 && frames.length - f <= MAX_FRAMES; f--) {
      const frame = record<SentryFrame>(frames[f]);
      if (frame !== null) lines.push(`    at ${frameText(frame)}`);
    }
    blocks.push(lines.join('\n'));
  }
  return blocks.join('\n');
}

/** `Type: value`, `Type`, or `value`. */
export function headLine(e: SentryException): string {
  const type = str(e.type);
  const value = str(e.value);
  if (type && value) return `${type}: ${value}`;
  return type || value;
}

function frameText(frame: SentryFrame): string {
  const fn = str(frame.function) || '<anonymous>';
  const file = str(frame.filename) || str(frame.abs_path) || str(frame.module) || '<unknown>';
  const line = position(frame.lineno);
  const col = position(frame.colno);
  const where = line ? (col ? `${file}:${line}:${col}` : `${file}:${line}`) : file;
  return `${fn} (${where})`;
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function position(v: unknown): string {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? String(v) : '';
}
