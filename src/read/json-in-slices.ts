import { eachInSlices, type NextSlice } from './read-slices';

/**
 * `JSON.stringify(value)`, the same text, with every array's items serialised in slices
 * (`eachInSlices`): an answer of 10,000 points or a month of minutes is built in turns instead of
 * one stretch of the event loop. Each item is serialised whole (items are small: a point, a
 * minute, a group); plain objects on the way to an array are walked key by key in
 * `JSON.stringify`'s order. Undefined when `JSON.stringify` gives undefined.
 */
export async function stringifyInSlices(value: unknown, nextSlice: NextSlice): Promise<string | undefined> {
  if (Array.isArray(value)) {
    const parts: string[] = [];
    await eachInSlices(value as readonly unknown[], nextSlice, (item) => {
      parts.push(JSON.stringify(item) ?? 'null');
    });
    return `[${parts.join(',')}]`;
  }
  if (isPlainObject(value)) {
    const parts: string[] = [];
    for (const [key, v] of Object.entries(value)) {
      const text = await stringifyInSlices(v, nextSlice);
      if (text !== undefined) parts.push(`${JSON.stringify(key)}:${text}`);
    }
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(value) as string | undefined;
}

/** An object `JSON.stringify` writes as its own enumerable keys: no `toJSON`, a plain prototype. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return (
    (proto === Object.prototype || proto === null) &&
    typeof (value as { toJSON?: unknown }).toJSON !== 'function'
  );
}
