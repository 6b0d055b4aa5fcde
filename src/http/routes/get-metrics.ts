import type { Request, Response } from 'express';
import { SluiceError } from '../../errors/catalogue';
import type { MetricResolution, Storage } from '../../storage/port';
import { QueryParams } from '../query-params';

const RESOLUTIONS: readonly MetricResolution[] = ['raw', '1m', '1h'];
/** Most points in one `GET /v1/metrics` answer. */
export const MAX_METRIC_POINTS = 10_000;
const MAX_TS = 8.64e15;

/** `GET /v1/metrics`: raw samples and SDK summaries of one metric, oldest first. */
export function getMetrics(storage: Pick<Storage, 'queryMetrics'>, resolutions: readonly MetricResolution[]) {
  return async (req: Request, res: Response): Promise<void> => {
    const q = new QueryParams(req.query as Record<string, unknown>, [
      'app',
      'name',
      'from',
      'to',
      'resolution',
      'limit',
    ]);
    const resolution = q.oneOf('resolution', RESOLUTIONS) ?? 'raw';
    if (!resolutions.includes(resolution)) {
      throw new SluiceError(
        'invalid_parameter',
        `Query parameter "resolution" ${resolution} is not available on this collector; available: ${resolutions.join(', ')}.`,
      );
    }
    const name = q.requiredString('name', 128);
    const points = await storage.queryMetrics({
      name,
      app: q.string('app', 128),
      from: q.integer('from', 0, MAX_TS),
      to: q.integer('to', 0, MAX_TS),
      resolution,
      limit: q.integer('limit', 1, MAX_METRIC_POINTS) ?? 1000,
    });
    res.json({ name, resolution, points });
  };
}
