import type { Request, Response } from 'express';
import { EVENT_TYPES } from '../../events/types';
import type { Storage } from '../../storage/port';
import { encodeCursor } from '../event-cursor';
import { QueryParams } from '../query-params';
import { toWire } from '../wire';

/** Largest page of `GET /v1/events`. */
export const MAX_EVENTS_PAGE = 1000;
const MAX_TS = 8.64e15;

/** `GET /v1/events`: newest first, keyset pagination through `cursor`. */
export function getEvents(storage: Pick<Storage, 'queryEvents'>) {
  return async (req: Request, res: Response): Promise<void> => {
    const q = new QueryParams(req.query as Record<string, unknown>, [
      'app',
      'type',
      'name',
      'from',
      'to',
      'limit',
      'cursor',
    ]);
    const before = q.cursor('cursor');
    const page = await storage.queryEvents({
      app: q.string('app', 128),
      type: q.oneOf('type', EVENT_TYPES),
      name: q.string('name', 128),
      from: q.integer('from', 0, MAX_TS),
      to: q.integer('to', 0, MAX_TS),
      limit: q.integer('limit', 1, MAX_EVENTS_PAGE) ?? 100,
      before,
    });
    res.json({ events: page.events.map(toWire), next_cursor: page.next ? encodeCursor(page.next) : null });
  };
}
