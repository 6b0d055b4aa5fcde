import type { Request, Response } from 'express';
import { sendJsonInSlices } from '../send-json-in-slices';
import type { Clock } from '../../clock';
import { ErrorGrouper } from '../../read/error-groups';
import { READ_LIMITS } from '../../read/read-limits';
import type { NextSlice } from '../../read/read-slices';
import type { Storage } from '../../storage/port';
import { QueryParams } from '../query-params';
import { readWindow } from '../read-window';
import { NARROW_WINDOW, narrowOnTimeout } from './narrow-on-timeout';

/**
 * `GET /v1/error-groups`: the errors of a window (default the last 24 hours) grouped by kind and
 * message fingerprint, with counts and first / last seen, from the newest
 * `READ_LIMITS.errorScanRows` errors: when there were more, `complete` is false and the counts
 * cover `scanned_from` on. The answer is bounded: the first `limit` groups of `total_groups`, and
 * per group the first `READ_LIMITS.appsPerErrorGroup` apps of `app_count`.
 */
export function getErrorGroups(storage: Pick<Storage, 'scanErrors'>, clock: Clock, nextSlice: NextSlice) {
  return async (req: Request, res: Response): Promise<void> => {
    const q = new QueryParams(req.query as Record<string, unknown>, [
      'app',
      'env',
      'version',
      'from',
      'to',
      'limit',
    ]);
    const L = READ_LIMITS;
    const filters = {
      app: q.string('app', L.maxTextLength),
      env: q.string('env', L.maxTextLength),
      version: q.string('version', L.maxTextLength),
    };
    const limit = q.integer('limit', 1, L.maxListPage) ?? L.defaultListPage;
    const { from, to } = readWindow(q, clock);
    // The rows are grouped page by page as they are read: a read of 20,000 rows holds one page.
    const grouper = new ErrorGrouper(nextSlice);
    const scan = await narrowOnTimeout([NARROW_WINDOW, 'one `app`'], () =>
      storage.scanErrors({ ...filters, from, to, scanLimit: L.errorScanRows }, grouper.add),
    );
    const groups = grouper.groups();
    await sendJsonInSlices(
      res,
      {
        from,
        to,
        complete: scan.boundTs === null,
        scanned_from: scan.boundTs ?? from,
        total_groups: groups.length,
        groups: groups.slice(0, limit).map((g) => ({
          fingerprint: g.fingerprint,
          kind: g.kind,
          template: g.template,
          message: g.message,
          count: g.count,
          first_seen: g.firstSeen,
          last_seen: g.lastSeen,
          last_id: g.lastId,
          apps: g.apps.slice(0, L.appsPerErrorGroup),
          app_count: g.apps.length,
        })),
      },
      nextSlice,
    );
  };
}
