import { isStorableText } from '../events/cut-text';

/** Longest name a list cursor holds: the longest app or metric name (the wire contract's). */
const MAX_NAME_LENGTH = 128;

/**
 * A position in `GET /v1/apps` or `GET /v1/metrics/names`, opaque to clients: base64url of `n:` and
 * the last name of a page (the next page holds the names after it).
 */
export function encodeNameCursor(name: string): string {
  return Buffer.from(`n:${name}`).toString('base64url');
}

/** The name a cursor holds, or null when it is not one `encodeNameCursor` could have made. */
export function decodeNameCursor(cursor: string): string | null {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith('n:')) return null;
  const name = text.slice(2);
  if (name.length === 0 || name.length > MAX_NAME_LENGTH || !isStorableText(name)) return null;
  // Only what encodeNameCursor writes: base64url that reads back to the same cursor.
  return encodeNameCursor(name) === cursor ? name : null;
}
