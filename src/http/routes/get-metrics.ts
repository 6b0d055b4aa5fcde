import type { Request, Response } from 'express';
import { sendJsonInSlices } from '../send-json-in-slices';
import { SluiceError } from '../../errors/catalogue';
import { storedNames } from '../../read/metric-names';
import { READ_LIMITS } from '../../read/read-limits';
import type { NextSlice } from '../../read/read-slices';
import type { MetricResolution, Storage } from '../../storage/port';
import { decodeMetricCursor, encodeMetricCursor } from '../metric-cursor';
import { QueryParams, invalid } from '../query-params';
import { givenWindow } from '../read-window';
import { NARROW_WINDOW, narrowOnTimeout } from './narrow-on-timeout';

const RESOLUTIONS: readonly MetricResolution[] = ['raw', '1m', '1h'];

/**
 * `GET /v1/metrics`: a metric read back by the name the app wrote, its raw samples and SDK
 * summaries (`<name>_summary`) together, oldest first, paged with `cursor`.
 */
export function getMetrics(
  storage: Pick<Storage, 'queryMetrics'>,
  resolutions: readonly MetricResolution[],
  nextSlice: NextSlice,
) {
  return async (req: Request, res: Response): Promise<void> => {
    const q = new QueryParams(req.query as Record<string, unknown>, [
      'app',
      'name',
      'from',
      'to',
      'resolution',
      'limit',
      'cursor',
    ]);
    const resolution = q.oneOf('resolution', RESOLUTIONS) ?? 'raw';
    if (!resolutions.includes(resolution)) {
      throw new SluiceError(
        'invalid_parameter',
        `Query parameter "resolution" ${resolution} is not available on this collector; available: ${resolutions.join(', ')}.`,
      );
    }
    const name = q.requiredString('name', READ_LIMITS.maxTextLength);
    const cursor = q.string('cursor', 256);
    const after = cursor === undefined ? undefined : decodeMetricCursor(resolution, cursor);
    if (after === null)
      throw invalid('cursor', `is not a cursor this API returned for resolution ${resolution}`);
    const { from, to } = givenWindow(q);
    const narrow = [NARROW_WINDOW, 'a coarser `resolution` (1m, 1h)', 'one `app`', 'a smaller `limit`'];
    const page = await narrowOnTimeout(narrow, () =>
      storage.queryMetrics({
        names: storedNames(name),
        app: q.string('app', READ_LIMITS.maxTextLength),
        from,
        to,
        resolution,
        limit: q.integer('limit', 1, READ_LIMITS.maxMetricPoints) ?? READ_LIMITS.defaultMetricPoints,
        after,
      }),
    );
    await sendJsonInSlices(
      res,
      {
        name,
        resolution,
        points: page.points,
        next_cursor: page.next === null ? null : encodeMetricCursor(resolution, page.next),
      },
      nextSlice,
    );
  };
}
