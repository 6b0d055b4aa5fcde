import type { Request, Response } from 'express';
import { sendJsonInSlices } from '../send-json-in-slices';
import type { Clock } from '../../clock';
import { READ_LIMITS } from '../../read/read-limits';
import type { NextSlice } from '../../read/read-slices';
import type { Storage } from '../../storage/port';
import { LIST_PARAMETERS, listPage } from '../list-page';
import { encodeNameCursor } from '../name-cursor';
import { QueryParams } from '../query-params';
import { readWindow } from '../read-window';
import { NARROW_WINDOW, narrowOnTimeout } from './narrow-on-timeout';

/**
 * `GET /v1/apps`: a page of the apps seen in a window (default the last 24 hours), in the
 * database's order of names, `prefix` to search, `cursor` for the next page: the newest event
 * (exact for errors, logs and lifecycle events; to the minute for metrics), non-metric events
 * counted up to a cap, and metric samples from the 1h rollups (up to a cap of rows).
 */
export function getApps(storage: Pick<Storage, 'queryApps'>, clock: Clock, nextSlice: NextSlice) {
  return async (req: Request, res: Response): Promise<void> => {
    const q = new QueryParams(req.query as Record<string, unknown>, ['from', 'to', ...LIST_PARAMETERS]);
    const { from, to } = readWindow(q, clock);
    const page = await narrowOnTimeout([NARROW_WINDOW, 'a smaller `limit`'], () =>
      storage.queryApps({
        from,
        to,
        ...listPage(q),
        countLimit: READ_LIMITS.appEventCountLimit,
        sampleRowsLimit: READ_LIMITS.appSampleRowsLimit,
      }),
    );
    await sendJsonInSlices(
      res,
      {
        from,
        to,
        apps: page.apps.map((r) => ({
          app: r.app,
          last_seen: Math.max(r.lastEventTs ?? 0, r.lastMetricMinute ?? 0),
          last_event_ts: r.lastEventTs,
          last_metric_minute: r.lastMetricMinute,
          events: r.events,
          events_capped: r.eventsCapped,
          metric_samples: r.metricSamples,
          metric_samples_capped: r.metricSamplesCapped,
        })),
        next_cursor: page.next === null ? null : encodeNameCursor(page.next),
      },
      nextSlice,
    );
  };
}
