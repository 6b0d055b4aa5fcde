import type { RequestListener } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { ApiKeyRing } from '../auth/api-keys';
import { SluiceError } from '../errors/catalogue';
import type { IntakeService } from '../intake/intake-service';
import type { Readiness } from '../lifecycle/readiness';
import type { Logger } from '../log/logger';
import type { AdmissionMetrics } from '../metrics/admission-instruments';
import type { Metrics } from '../metrics/instruments';
import type { MetricResolution, Storage } from '../storage/port';
import { authenticate } from './authenticate';
import { cors, corsPolicy } from './cors';
import { eventsListener } from './events-listener';
import type { RefusalEpisodes } from './refusal-episodes';
import { requestContext, type RequestContextDeps } from './request-context';
import { getEvents } from './routes/get-events';
import { getMetrics } from './routes/get-metrics';
import { livez, metricsText, readyz } from './routes/operations';
import { eventsHandler, postEvents } from './routes/post-events';
import { PATHS } from './paths';
import { sendError } from './send-error';
import type { TurnQueue } from '../intake/turn-queue';

export interface AppDeps {
  readonly ingest: Pick<IntakeService, 'ingest'>;
  readonly storage: Pick<Storage, 'queryEvents' | 'queryMetrics'>;
  readonly readiness: Readiness;
  readonly metrics: Metrics;
  readonly admissionMetrics: AdmissionMetrics;
  readonly logger: Logger;
  /** API keys; null: auth off (anyone may write and read). */
  readonly keyRing: ApiKeyRing | null;
  /** Origins allowed to POST from a browser (`*` for any); empty: no CORS. */
  readonly corsOrigins: readonly string[];
  /** Largest body after decompression (bytes). */
  readonly maxBodyBytes: number;
  /** Deepest JSON nesting accepted. */
  readonly maxJsonDepth: number;
  /** Most events per request and attributes per event: together they bound a body's JSON values. */
  readonly maxEventsPerRequest: number;
  readonly maxAttributes: number;
  /** Turns for the CPU-heavy part of `POST /v1/events` (see turn-queue.ts). */
  readonly turns: Pick<TurnQueue, 'take'>;
  /** Resolutions `GET /v1/metrics` serves. Default raw only. */
  readonly metricResolutions?: readonly MetricResolution[];
  /** Where 503 refusals are logged, once per episode and route. */
  readonly refusals: RefusalEpisodes;
}

/**
 * Builds the HTTP app. Never listens: `server.ts` does. Routes are thin: parse, call one service,
 * map. `POST /v1/events` (and its preflight) is served by `events-listener.ts` in front of Express,
 * from the same functions as the Express route, which stays for the requests the listener does not
 * take (an absolute-form target).
 */
export function createApp(deps: AppDeps): RequestListener {
  const context: RequestContextDeps = {
    logger: deps.logger,
    metrics: deps.metrics,
    closing: () => deps.readiness.draining,
    refusals: deps.refusals,
  };
  const handle = eventsHandler(deps);
  const events = eventsListener({
    context,
    handle,
    keyRing: deps.keyRing,
    admissionMetrics: deps.admissionMetrics,
    cors: deps.corsOrigins.length > 0 ? corsPolicy(deps.corsOrigins) : null,
  });
  const app = expressApp(deps, context, handle);
  return (req, res) => {
    if (events.serves(req)) events.listener(req, res);
    else app(req, res);
  };
}

function expressApp(
  deps: AppDeps,
  context: RequestContextDeps,
  handle: ReturnType<typeof eventsHandler>,
): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');
  // Only the canonical paths exist (paths.ts): the overload gate matches them the same way.
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  app.use(requestContext(context));

  const write = authenticate(deps.keyRing, 'ingest', deps.admissionMetrics);
  const read = authenticate(deps.keyRing, 'read', deps.admissionMetrics);
  if (deps.corsOrigins.length > 0) {
    const allowCors = cors(deps.corsOrigins);
    app.options(PATHS.events, allowCors);
    app.post(PATHS.events, allowCors, write, postEvents(handle));
  } else {
    app.post(PATHS.events, write, postEvents(handle));
  }
  // Health and /metrics stay open: the load balancer and Prometheus need them; keep them off the public network.
  app.get(PATHS.events, read, getEvents(deps.storage));
  app.get(PATHS.metrics, read, getMetrics(deps.storage, deps.metricResolutions ?? ['raw']));
  app.get(PATHS.livez, livez());
  app.get(PATHS.readyz, readyz(deps.readiness));
  app.get(PATHS.prometheus, metricsText(deps.metrics.registry));

  app.use((req: Request, res: Response) => {
    sendError(res, new SluiceError('not_found', `No route for ${req.method} ${req.path}.`), req.context);
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) {
      req.context.log.error({ err }, 'error after response started');
      res.destroy();
      return;
    }
    sendError(res, err, req.context);
  });
  return app;
}
