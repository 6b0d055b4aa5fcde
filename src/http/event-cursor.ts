import { LOWER_CASE_UUID_SHAPE } from '../events/uuid';

/** A keyset position in `GET /v1/events`: the last event of a page, newest first. */
export interface EventCursor {
  /** Milliseconds since the Unix epoch, 0 to 8.64e15 (the range of a JavaScript Date). */
  readonly ts: number;
  /** Lower-case UUID. */
  readonly id: string;
}

const MAX_TS = 8.64e15;
const CURSOR_TEXT = new RegExp(`^(\\d{1,16}):(${LOWER_CASE_UUID_SHAPE.source})$`);

/** Opaque to clients: base64url of `ts:id`. */
export function encodeCursor(pos: EventCursor): string {
  return Buffer.from(`${pos.ts}:${pos.id}`).toString('base64url');
}

/**
 * The position a cursor names, or null when it is not one `encodeCursor` could have made. Both parts
 * are checked to the storage types (bigint, uuid): a cursor that passes never fails a cast.
 */
export function decodeCursor(cursor: string): EventCursor | null {
  const m = CURSOR_TEXT.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) return null;
  const ts = Number(m[1]);
  if (ts > MAX_TS) return null;
  return { ts, id: m[2] as string };
}
