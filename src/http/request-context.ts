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

const LOG = Symbol('sluice.requestLog');

/**
 * Gives every request of an app a `log` property: a child logger carrying the request id, made on
 * first use (most requests never log at the default level). Defined once on the app's request
 * prototype (`app.request`) rather than on each request, which would turn every request object into
 * a slow dictionary-mode object.
 */
export function installRequestLog(requestPrototype: object, logger: Logger): void {
  type WithLog = Request & { [LOG]?: Logger };
  Object.defineProperty(requestPrototype, 'log', {
    configurable: true,
    get(this: WithLog): Logger {
      return (this[LOG] ??= logger.child({ reqId: this.id }));
    },
    set(this: WithLog, log: Logger) {
      this[LOG] = log;
    },
  });
}

/**
 * Gives each request an id (the load balancer's `X-Request-Id` when sane,
 * else a new UUID) and records its duration by route template — never by raw
 * path, which is unbounded. Its `log` comes from `installRequestLog`.
 */
export function requestContext(logger: Logger, metrics: Metrics, closing: () => boolean) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
    req.id = id;
    res.setHeader('X-Request-Id', id);
    // While draining, every answer closes its connection so keep-alive clients move to another instance.
    if (closing()) res.setHeader('Connection', 'close');
    const started = performance.now();
    res.on('finish', () => {
      const seconds = (performance.now() - started) / 1000;
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
