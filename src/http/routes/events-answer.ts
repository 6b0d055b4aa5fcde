import { eachInSlices, type NextSlice } from '../../read/read-slices';
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
 * Built in slices (`eachInSlices`): a megabyte of events is several turns, not one.
 */
export async function eventsAnswer(page: EventPage, maxBytes: number, nextSlice: NextSlice): Promise<string> {
  const parts: string[] = [];
  let bytes = ENVELOPE_BYTES + CURSOR_BYTES;
  let next = page.next;
  await eachInSlices(page.events, nextSlice, (e, i) => {
    const json = JSON.stringify(toWire(e));
    const length = Buffer.byteLength(json) + 1;
    if (i > 0 && bytes + length > maxBytes) {
      const last = page.events[i - 1] as EventPage['events'][number];
      next = { ts: last.ts, id: last.id };
      return false;
    }
    parts.push(json);
    bytes += length;
    return true;
  });
  const cursor = next === null ? null : encodeCursor(next);
  return `{"events":[${parts.join(',')}],"next_cursor":${JSON.stringify(cursor)}}`;
}
