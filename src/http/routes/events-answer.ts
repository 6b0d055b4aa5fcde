import type { EventPage } from '../../storage/port';
import { encodeCursor } from '../event-cursor';
import { toWire } from '../wire';

/** `{"events":[` … `],"next_cursor":` … `}` around the events: what the bound counts besides them. */
const ENVELOPE_BYTES = '{"events":[],"next_cursor":}'.length;
/** The longest cursor `encodeCursor` writes, quoted (a ts and a uuid, base64url). */
const CURSOR_BYTES = 96;

/**
 * The JSON answer of `GET /v1/events` for `page`, at most `maxBytes` long: each event is
 * serialised alone, and the events that would take the answer past the bound are left to the
 * next page, the cursor after the last event kept (a page keeps its first event whatever its size).
 */
export function eventsAnswer(page: EventPage, maxBytes: number): string {
  const parts: string[] = [];
  let bytes = ENVELOPE_BYTES + CURSOR_BYTES;
  let next = page.next;
  for (const [i, e] of page.events.entries()) {
    const json = JSON.stringify(toWire(e));
    const length = Buffer.byteLength(json) + 1;
    if (i > 0 && bytes + length > maxBytes) {
      const last = page.events[i - 1] as EventPage['events'][number];
      next = { ts: last.ts, id: last.id };
      break;
    }
    parts.push(json);
    bytes += length;
  }
  const cursor = next === null ? null : encodeCursor(next);
  return `{"events":[${parts.join(',')}],"next_cursor":${JSON.stringify(cursor)}}`;
}
