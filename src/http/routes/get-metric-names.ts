import type { Request, Response } from 'express';
import { sendJsonInSlices } from '../send-json-in-slices';
import type { Clock } from '../../clock';
import { writtenNames } from '../../read/metric-names';
import { READ_LIMITS } from '../../read/read-limits';
import type { NextSlice } from '../../read/read-slices';
import type { Storage } from '../../storage/port';
import { LIST_PARAMETERS, listPage } from '../list-page';
import { encodeNameCursor } from '../name-cursor';
import { QueryParams } from '../query-params';
import { readWindow } from '../read-window';
import { NARROW_WINDOW, narrowOnTimeout } from './narrow-on-timeout';

/**
 * `GET /v1/metrics/names`: a page of the metrics seen in a window (default the last 24 hours),
 * optionally of one app, `prefix` to search, `cursor` for the next page, by the name the app wrote
 * (`<name>_summary` series are listed as `<name>`), with their kinds: `sample` and / or `summary`,
 * by the shape of their rows, and their apps (up to a cap).
 */
export function getMetricNames(
  storage: Pick<Storage, 'queryMetricNames' | 'queryMetricName'>,
  clock: Clock,
  nextSlice: NextSlice,
) {
  return async (req: Request, res: Response): Promise<void> => {
    const q = new QueryParams(req.query as Record<string, unknown>, [
      'app',
      'from',
      'to',
      ...LIST_PARAMETERS,
    ]);
    const app = q.string('app', READ_LIMITS.maxTextLength);
    const { from, to } = readWindow(q, clock);
    const scope = {
      from,
      to,
      ...(app === undefined ? {} : { app }),
      appsPerName: READ_LIMITS.appsPerName,
      rowsPerName: READ_LIMITS.rowsPerName,
    };
    const narrow = [NARROW_WINDOW, 'one `app`', 'a smaller `limit`'];
    const { page, names } = await narrowOnTimeout(narrow, async () => {
      const page = await storage.queryMetricNames({ ...scope, ...listPage(q) });
      return {
        page,
        names: await writtenNames(page.names, (name) => storage.queryMetricName({ ...scope, name })),
      };
    });
    await sendJsonInSlices(
      res,
      {
        app: app ?? null,
        from,
        to,
        names: names.map((n) => ({ name: n.name, kinds: n.kinds, apps: n.apps, apps_capped: n.appsCapped })),
        next_cursor: page.next === null ? null : encodeNameCursor(page.next),
      },
      nextSlice,
    );
  };
}
