import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Principal } from '../auth/api-keys';
import type { ErrorCode } from '../errors/catalogue';
import type { Logger } from '../log/logger';
import type { Metrics } from '../metrics/instruments';
import type { RefusalEpisodes } from './refusal-episodes';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

declare module 'express-serve-static-core' {
  interface Request {
    /** Set by `requestContext`, the app's first middleware. */
    context: RequestContext;
  }
}

export interface RequestContextDeps {
  readonly logger: Logger;
  readonly metrics: Pick<Metrics, 'httpDuration'>;
  /** True once shutdown began: answers then close their connection. */
  readonly closing: () => boolean;
  /** Where 503 refusals are logged, once per episode and route. */
  readonly refusals: RefusalEpisodes;
}

/**
 * One request's context, whichever path serves it (the Express app or the `/v1/events` listener):
 * its id (the load balancer's `X-Request-Id` when sane, else a new UUID), whether its answer closes
 * the connection (while draining, so keep-alive clients move to another instance), its principal,
 * and its log: a child logger carrying the request id, made on first use (most requests never log
 * at the default level). `finished` records the duration by route template — never by raw path,
 * which is unbounded.
 */
export class RequestContext {
  readonly id: string;
  /** Answers close their connection: the collector is draining. */
  readonly closesConnection: boolean;
  /** Set once the request is authenticated; null while auth is off or not done yet. */
  principal: Principal | null = null;
  /** The catalogue code of the answer, set by the error mapper; null for an answer that is not an error. */
  errorCode: ErrorCode | null = null;
  private readonly started = performance.now();
  private child: Logger | undefined;

  constructor(
    private readonly deps: RequestContextDeps,
    private readonly method: string,
    requestId: string | string[] | undefined,
  ) {
    this.id = requestIdOf(requestId);
    this.closesConnection = deps.closing();
  }

  get log(): Logger {
    return (this.child ??= this.deps.logger.child({ reqId: this.id }));
  }

  /** The request's key: logs carry its id from here on, never the secret. */
  authenticated(principal: Principal): void {
    this.principal = principal;
    this.child = this.log.child({ keyId: principal.keyId });
  }

  /**
   * Records the answer once it is written: its duration, and its log. A 500 is a bug: one error
   * line each. A 503 with a catalogue code is an expected refusal (storage or queue away, reads
   * saturated): logged once per episode by `RefusalEpisodes`, and per request at debug only.
   */
  finished(route: string, status: number): void {
    const seconds = (performance.now() - this.started) / 1000;
    const { method } = this;
    this.deps.metrics.httpDuration.observe({ route, method, status: String(status) }, seconds);
    if (status === 503 && this.errorCode !== null) this.deps.refusals.refused(method, route, this.errorCode);
    else this.deps.refusals.served(method, route);
    if (status >= 500 && status !== 503) {
      this.log.error({ method, route, status, ms: seconds * 1000 }, 'request failed');
    } else if (this.deps.logger.isLevelEnabled('debug')) {
      this.log.debug(
        { method, route, status, error: this.errorCode ?? undefined, ms: seconds * 1000 },
        'request',
      );
    }
  }
}

/** A request's id: the load balancer's `X-Request-Id` when sane, else a new UUID (every port answers with it). */
export function requestIdOf(header: string | string[] | undefined): string {
  return typeof header === 'string' && SAFE_REQUEST_ID.test(header) ? header : randomUUID();
}

/** A new context for `req`. */
export function contextOf(deps: RequestContextDeps, req: IncomingMessage): RequestContext {
  return new RequestContext(deps, req.method ?? '', req.headers['x-request-id']);
}

/** The Express side: the app's first middleware gives each request its context (`req.context`). */
export function requestContext(deps: RequestContextDeps) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const context = contextOf(deps, req);
    req.context = context;
    res.setHeader('X-Request-Id', context.id);
    if (context.closesConnection) res.setHeader('Connection', 'close');
    res.once('finish', () => {
      context.finished((req.route as { path?: string } | undefined)?.path ?? 'unmatched', res.statusCode);
    });
    next();
  };
}
