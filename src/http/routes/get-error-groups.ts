import type { Request, Response } from 'express';
import type { Clock } from '../../clock';
import { groupErrors } from '../../read/error-groups';
import { READ_LIMITS } from '../../read/read-limits';
import type { Storage } from '../../storage/port';
import { QueryParams } from '../query-params';
import { readWindow } from '../read-window';

/**
 * `GET /v1/error-groups`: the errors of a window (default the last 24 hours) grouped by kind and
 * message fingerprint, with counts and first / last seen, from the newest
 * `READ_LIMITS.errorScanRows` errors: when there were more, `complete` is false and the counts
 * cover `scanned_from` on.
 */
export function getErrorGroups(storage: Pick<Storage, 'scanErrors'>, clock: Clock) {
  return async (req: Request, res: Response): Promise<void> => {
    const q = new QueryParams(req.query as Record<string, unknown>, ['app', 'env', 'version', 'from', 'to']);
    const L = READ_LIMITS;
    const filters = {
      app: q.string('app', L.maxTextLength),
      env: q.string('env', L.maxTextLength),
      version: q.string('version', L.maxTextLength),
    };
    const { from, to } = readWindow(q, clock);
    const scan = await storage.scanErrors({ ...filters, from, to, scanLimit: L.errorScanRows });
    res.json({
      from,
      to,
      complete: scan.boundTs === null,
      scanned_from: scan.boundTs ?? from,
      groups: groupErrors(scan.rows).map((g) => ({
        fingerprint: g.fingerprint,
        kind: g.kind,
        template: g.template,
        message: g.message,
        count: g.count,
        first_seen: g.firstSeen,
        last_seen: g.lastSeen,
        last_id: g.lastId,
        apps: g.apps,
      })),
    });
  };
}
