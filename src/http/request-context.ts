import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../log/logger';
import type { Metrics } from '../metrics/instruments';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

declare module 'express-serve-static-core' {
  interface Request {
    /** Child logger carrying this request's id. */
    log: Logger;
    id: string;
  }
}

/**
 * Gives each request an id (the load balancer's `X-Request-Id` when sane,
 * else a new UUID), a child logger carrying it, and records its duration by
 * route template — never by raw path, which is unbounded.
 */
export function requestContext(logger: Logger, metrics: Metrics, closing: () => boolean) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
    req.id = id;
    // The child logger is made on first use: most requests never log a line at the default level.
    let log: Logger | null = null;
    Object.defineProperty(req, 'log', {
      configurable: true,
      get: () => (log ??= logger.child({ reqId: id })),
      set: (l: Logger) => {
        log = l;
      },
    });
    res.setHeader('X-Request-Id', id);
    // While draining, every answer closes its connection so keep-alive clients move to another instance.
    if (closing()) res.setHeader('Connection', 'close');
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = (req.route as { path?: string } | undefined)?.path ?? 'unmatched';
      metrics.httpDuration.observe({ route, method: req.method, status: String(res.statusCode) }, seconds);
      if (res.statusCode >= 500) {
        req.log.error(
          { method: req.method, route, status: res.statusCode, ms: seconds * 1000 },
          'request failed',
        );
      } else if (logger.isLevelEnabled('debug')) {
        req.log.debug({ method: req.method, route, status: res.statusCode, ms: seconds * 1000 }, 'request');
      }
    });
    next();
  };
}
