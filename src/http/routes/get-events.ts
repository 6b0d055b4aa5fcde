import type { Request, Response } from 'express';
import { EVENT_TYPES } from '../../events/types';
import { READ_LIMITS } from '../../read/read-limits';
import type { NextSlice } from '../../read/read-slices';
import type { Storage } from '../../storage/port';
import { QueryParams } from '../query-params';
import { givenWindow } from '../read-window';
import { eventsAnswer } from './events-answer';
import { NARROW_WINDOW, narrowOnTimeout } from './narrow-on-timeout';

const ATTRIBUTE_PREFIX = 'attr.';

/**
 * `GET /v1/events`: newest first, keyset pagination through `cursor`. A page whose filters no index
 * serves reads at most `READ_LIMITS.eventsScanRows` rows of each table: it may hold fewer than
 * `limit` events (or none) with a `next_cursor` that continues below what it read. An answer is at
 * most `READ_LIMITS.maxEventsPageBytes` long (events-answer.ts).
 */
export function getEvents(storage: Pick<Storage, 'queryEvents'>, nextSlice: NextSlice) {
  return async (req: Request, res: Response): Promise<void> => {
    const q = new QueryParams(
      req.query as Record<string, unknown>,
      ['app', 'type', 'name', 'env', 'version', 'text', 'from', 'to', 'limit', 'cursor'],
      [ATTRIBUTE_PREFIX],
    );
    const L = READ_LIMITS;
    const { from, to } = givenWindow(q);
    const text = q.string('text', L.maxSearchLength);
    const narrow = [NARROW_WINDOW, 'one `app`', 'a `type` or `name`'];
    if (text !== undefined) narrow.push('a longer `text` (3 characters or more use its index)');
    const page = await narrowOnTimeout(narrow, () =>
      storage.queryEvents({
        app: q.string('app', L.maxTextLength),
        type: q.oneOf('type', EVENT_TYPES),
        name: q.string('name', L.maxTextLength),
        env: q.string('env', L.maxTextLength),
        version: q.string('version', L.maxTextLength),
        attributes: q.prefixed(ATTRIBUTE_PREFIX, L.maxAttributeFilters, L.maxAttributeKeyLength),
        text,
        from,
        to,
        limit: q.integer('limit', 1, L.maxEventsPage) ?? L.defaultEventsPage,
        before: q.cursor('cursor'),
        scanLimit: L.eventsScanRows,
      }),
    );
    res.type('application/json').send(await eventsAnswer(page, L.maxEventsPageBytes, nextSlice));
  };
}
