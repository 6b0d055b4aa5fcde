import express, { type NextFunction, type Request, type Response } from 'express';
import { SluiceError } from '../errors/catalogue';
import type { IngestService } from '../ingest/ingest-service';
import type { Readiness } from '../lifecycle/readiness';
import type { Logger } from '../log/logger';
import type { Metrics } from '../metrics/instruments';
import type { MetricResolution, Storage } from '../storage/port';
import { requestContext } from './request-context';
import { getEvents } from './routes/get-events';
import { getMetrics } from './routes/get-metrics';
import { livez, metricsText, readyz } from './routes/operations';
import { postEvents } from './routes/post-events';
import { sendError } from './send-error';

export interface AppDeps {
  readonly ingest: Pick<IngestService, 'ingest'>;
  readonly storage: Pick<Storage, 'queryEvents' | 'queryMetrics'>;
  readonly readiness: Readiness;
  readonly metrics: Metrics;
  readonly logger: Logger;
  /** Largest body after decompression (bytes). */
  readonly maxBodyBytes: number;
  /** Deepest JSON nesting accepted. */
  readonly maxJsonDepth: number;
  /** Resolutions `GET /v1/metrics` serves. Default raw only. */
  readonly metricResolutions?: readonly MetricResolution[];
}

/** Builds the HTTP app. Never listens: `server.ts` does. Routes are thin: parse, call one service, map. */
export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');
  app.use(requestContext(deps.logger, deps.metrics, () => deps.readiness.draining));

  app.post('/v1/events', postEvents(deps));
  app.get('/v1/events', getEvents(deps.storage));
  app.get('/v1/metrics', getMetrics(deps.storage, deps.metricResolutions ?? ['raw']));
  app.get('/livez', livez());
  app.get('/readyz', readyz(deps.readiness));
  app.get('/metrics', metricsText(deps.metrics.registry));

  app.use((req: Request, res: Response) => {
    sendError(res, new SluiceError('not_found', `No route for ${req.method} ${req.path}.`), req.log);
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) {
      req.log.error({ err }, 'error after response started');
      res.destroy();
      return;
    }
    sendError(res, err, req.log);
  });
  return app;
}
