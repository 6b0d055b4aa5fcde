import type { Request, Response } from 'express';
import type { Clock } from '../../clock';
import { READ_LIMITS } from '../../read/read-limits';
import type { Storage } from '../../storage/port';
import { QueryParams } from '../query-params';
import { readWindow } from '../read-window';

/**
 * `GET /v1/apps`: the apps seen in a window (default the last 24 hours), in app order: the newest
 * event (exact for errors, logs and lifecycle events; to the minute for metrics), non-metric events
 * counted up to a cap, and metric samples from the 1h rollups.
 */
export function getApps(storage: Pick<Storage, 'queryApps'>, clock: Clock) {
  return async (req: Request, res: Response): Promise<void> => {
    const q = new QueryParams(req.query as Record<string, unknown>, ['from', 'to']);
    const { from, to } = readWindow(q, clock);
    const rows = await storage.queryApps({
      from,
      to,
      countLimit: READ_LIMITS.appEventCountLimit,
      maxApps: READ_LIMITS.maxApps,
    });
    res.json({
      from,
      to,
      apps: rows.map((r) => ({
        app: r.app,
        last_seen: Math.max(r.lastEventTs ?? 0, r.lastMetricMinute ?? 0),
        last_event_ts: r.lastEventTs,
        last_metric_minute: r.lastMetricMinute,
        events: r.events,
        events_capped: r.eventsCapped,
        metric_samples: r.metricSamples,
      })),
    });
  };
}
