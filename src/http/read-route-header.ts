import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ReadRouteScope, withReadRouteScope } from '../storage/read-source';

/**
 * With a read standby (`SLUICE_DATABASE_READ_URL`), where a read was answered from: `standby`, or
 * `primary; reason=…` (a `PrimaryReason`). Absent without a standby. docs/http-api.md, "Read API".
 */
export const READ_SOURCE_HEADER = 'X-Sluice-Read-Source';

/** Gives the request's reads one route scope, and answers where they went in `READ_SOURCE_HEADER`. */
export function readRouteHeader(): RequestHandler {
  return (_req: Request, res: Response, next: NextFunction): void => {
    const scope = new ReadRouteScope((route) => {
      if (res.headersSent) return;
      res.setHeader(
        READ_SOURCE_HEADER,
        route.reason === null ? route.source : `${route.source}; reason=${route.reason}`,
      );
    });
    withReadRouteScope(scope, next);
  };
}
