import type { Request, Response } from 'express';
import type { Clock } from '../../clock';
import { MINUTE_MS, minuteOf } from '../../loss-map/outcome';
import { READ_LIMITS } from '../../read/read-limits';
import type { NextSlice } from '../../read/read-slices';
import type { Storage } from '../../storage/port';
import { QueryParams, invalid } from '../query-params';
import { checkWindow, givenWindow } from '../read-window';
import { sendJsonInSlices } from '../send-json-in-slices';
import { NARROW_WINDOW, narrowOnTimeout } from './narrow-on-timeout';
import { OutcomesTally } from './outcomes-answer';

/**
 * `GET /v1/outcomes`: the loss map of one app over a window of whole minutes of the events' `ts`
 * (default the last hour; `from` rounded down and `to` up to a minute): generated, stored, losses
 * by stage and reason, pending, and (outside the identity) throttled events and shed requests; per
 * minute with `by=minute` (docs/http-api.md).
 */
export function getOutcomes(
  storage: Pick<Storage, 'queryOutcomes'>,
  clock: Clock,
  pendingHorizonMs: number,
  nextSlice: NextSlice,
) {
  return async (req: Request, res: Response): Promise<void> => {
    const q = new QueryParams(req.query as Record<string, unknown>, ['app', 'from', 'to', 'by']);
    // `app=` reads what was counted without an app: requests shed without a valid ingest key,
    // events rejected without a readable `source.app`.
    const app = q.requiredStringOrEmpty('app', READ_LIMITS.maxTextLength);
    const by = q.oneOf('by', ['minute'] as const);
    // The window as given is checked before it is widened to whole minutes.
    const given = givenWindow(q);
    const toMs = given.to ?? clock.now();
    const to = minuteOf(toMs) === toMs ? toMs : minuteOf(toMs) + MINUTE_MS;
    const from = minuteOf(given.from ?? Math.max(0, to - READ_LIMITS.defaultOutcomeWindowMs));
    checkWindow(from, to);
    if (to - from > READ_LIMITS.maxOutcomeWindowMs)
      throw invalid(
        'from',
        `must be at most ${READ_LIMITS.maxOutcomeWindowMs / 86_400_000} days before "to"`,
      );
    // As asked: widening to whole minutes may add up to two.
    if (by === 'minute' && toMs - (given.from ?? from) > READ_LIMITS.maxOutcomeMinutesWindowMs)
      throw invalid(
        'from',
        `must be at most ${READ_LIMITS.maxOutcomeMinutesWindowMs / 3_600_000} hours before "to" with by=minute`,
      );
    const horizon = { now: clock.now(), horizonMs: pendingHorizonMs };
    // Tallied page by page as the rows are read: a week of minutes never stays whole in memory.
    const tally = new OutcomesTally(horizon, by === 'minute', nextSlice);
    await narrowOnTimeout([NARROW_WINDOW], () =>
      storage.queryOutcomes({ app, from, to, byType: false }, tally.add),
    );
    const answer = tally.answer();
    await sendJsonInSlices(
      res,
      { app, from, to, ...answer.map, ...(answer.minutes === null ? {} : { minutes: answer.minutes }) },
      nextSlice,
    );
  };
}
