import type { Request, Response } from 'express';
import type { Clock } from '../../clock';
import { metricNames } from '../../read/metric-names';
import { READ_LIMITS } from '../../read/read-limits';
import type { Storage } from '../../storage/port';
import { QueryParams } from '../query-params';
import { readWindow } from '../read-window';

/**
 * `GET /v1/metrics/names`: the metrics seen in a window (default the last 24 hours), optionally of
 * one app, by the name the app wrote (`<name>_summary` series are listed as `<name>`), with their
 * kinds: `sample` and / or `summary`, by the shape of their rows.
 */
export function getMetricNames(storage: Pick<Storage, 'queryMetricSeries'>, clock: Clock) {
  return async (req: Request, res: Response): Promise<void> => {
    const q = new QueryParams(req.query as Record<string, unknown>, ['app', 'from', 'to']);
    const app = q.string('app', READ_LIMITS.maxTextLength);
    const { from, to } = readWindow(q, clock);
    const series = await storage.queryMetricSeries({ app, from, to, maxSeries: READ_LIMITS.maxMetricSeries });
    res.json({ app: app ?? null, from, to, names: metricNames(series) });
  };
}
