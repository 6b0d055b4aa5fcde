import type { RequestListener } from 'node:http';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { ApiKeyRing } from '../auth/api-keys';
import { SluiceError } from '../errors/catalogue';
import type { IntakeService, ReportReading } from '../intake/intake-service';
import type { Readiness } from '../lifecycle/readiness';
import type { Logger } from '../log/logger';
import type { IntakeMetrics } from '../metrics/intake-instruments';
import type { Metrics } from '../metrics/instruments';
import type { Clock } from '../clock';
import type { ConsoleFile } from '../console/assets';
import type { PipelineState } from '../metrics/pipeline-state';
import type { MetricResolution, Storage } from '../storage/port';
import { authenticate } from './authenticate';
import { CORS_METHODS, cors, corsPolicy } from './cors';
import { eventsListener } from './events-listener';
import type { RefusalEpisodes } from './refusal-episodes';
import { requestContext, type RequestContextDeps } from './request-context';
import { consoleFile } from './routes/console';
import { getApps } from './routes/get-apps';
import { getErrorGroups } from './routes/get-error-groups';
import { getEvents } from './routes/get-events';
import { getMetricNames } from './routes/get-metric-names';
import { getMetrics } from './routes/get-metrics';
import { getPipeline } from './routes/get-pipeline';
import { livez, metricsText, readyz } from './routes/operations';
import { loopbackOnly } from './protected-mode';
import { eventsHandler, postEvents } from './routes/post-events';
import { getOutcomes } from './routes/get-outcomes';
import type { Principal } from '../auth/api-keys';
import { PATHS } from './paths';
import { readBarrier } from './read-barrier';
import { readRouteHeader } from './read-route-header';
import { AllowedMethods } from './allowed-methods';
import { READ_LIMITS } from '../read/read-limits';
import { sendError } from './send-error';
import type { TurnOrder } from '../intake/turn-order';
import type { SentryMetrics } from '../metrics/sentry-instruments';
import type { SentryIntake } from '../sentry/sentry-intake';
import { postSentry, RATE_LIMITS_HEADER, SENTRY_PATHS } from './sentry/post-sentry';

export interface AppDeps {
  readonly ingest: Pick<IntakeService, 'ingest' | 'ingestBody'>;
  readonly storage: Pick<
    Storage,
    | 'queryEvents'
    | 'queryMetrics'
    | 'queryApps'
    | 'queryMetricNames'
    | 'queryMetricName'
    | 'scanErrors'
    | 'queryOutcomes'
  >;
  /** The default end of a read's window. */
  readonly clock: Clock;
  /**
   * Past the end of its minute, how long an event may still be pending in the loss map
   * (milliseconds; `SLUICE_OUTCOMES_PENDING_HORIZON`, default 1 h, in queue mode at least the
   * stream's own max age).
   */
  readonly pendingHorizonMs: number;
  /** This process's pipeline state (`GET /pipeline`). */
  readonly pipeline: Pick<PipelineState, 'snapshot'>;
  /**
   * The console's page and files (served at `/` and `/console/…`); empty when it is off. With
   * `consoleMissing` set, `/` answers 404 with that message (on, but not built).
   */
  readonly consoleFiles: readonly ConsoleFile[];
  readonly consoleMissing?: string;
  readonly readiness: Readiness;
  readonly metrics: Metrics;
  readonly intakeMetrics: IntakeMetrics;
  readonly logger: Logger;
  /** API keys; null: auth off (anyone may write; who may read is `loopbackReadersOnly`). */
  readonly keyRing: ApiKeyRing | null;
  /**
   * Protected mode (`protected-mode.ts`): the read API, the console and `/pipeline` answer loopback
   * clients only (`403 protected_mode` to others). Set by compose/ when no keys are configured and
   * `SLUICE_PROTECTED_MODE` is on. Default false.
   */
  readonly loopbackReadersOnly?: boolean;
  /** Origins allowed to call the API from a browser (`*` for any); empty: no CORS. */
  readonly corsOrigins: readonly string[];
  /** Largest body after decompression (bytes). */
  readonly maxBodyBytes: number;
  /** Deepest JSON nesting accepted. */
  readonly maxJsonDepth: number;
  /** Most events per request and attributes per event: together they bound a body's JSON values. */
  readonly maxEventsPerRequest: number;
  readonly maxAttributes: number;
  /** Turns for the CPU-heavy part of `POST /v1/events` (see turn-order.ts). */
  readonly turns: Pick<TurnOrder, 'wait'>;
  /**
   * Turns for the read routes' work on the event loop (building answers), a line of their own:
   * a read waits in it, never in `turns`, so the wait ingest is shed on counts no read.
   */
  readonly readTurns: Pick<TurnOrder, 'wait'>;
  /** The turn a read waits for before its query (compose/ holds it while the event loop lags). */
  readonly readStarts: Pick<TurnOrder, 'wait'>;
  /** Resolutions `GET /v1/metrics` serves. Default raw only. */
  readonly metricResolutions?: readonly MetricResolution[];
  /** Where 503 refusals are logged, once per episode and route. */
  readonly refusals: RefusalEpisodes;
  /** `POST /v1/events`'s client reports (see routes/post-events.ts); absent: ignored. */
  readonly readReport?: (raw: unknown, principal: Principal | null) => ReportReading;
  /**
   * What a read waits for first (at most `READ_LIMITS.barrierTimeoutMs`): the commit of the events
   * this collector acknowledged before it (`read-barrier.ts`). Absent: reads do not wait (queue
   * mode, where this process holds no events).
   */
  readonly acknowledgedSettled?: () => Promise<void> | null;
  /** The Sentry endpoints (`POST /api/<project_id>/envelope/`, `/store/`; docs/sentry.md); absent: not served. */
  readonly sentry?: {
    readonly intake: Pick<SentryIntake, 'ingest'>;
    /** Auth off: the app of each Sentry project id (`SLUICE_SENTRY_PROJECTS`). */
    readonly projects: ReadonlyMap<string, string>;
    readonly metrics: SentryMetrics;
  };
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
    intakeMetrics: deps.intakeMetrics,
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

  const allowed = new AllowedMethods();
  const route = (method: 'GET' | 'POST' | 'OPTIONS', path: string, ...handlers: RequestHandler[]): void => {
    allowed.add(method, path);
    if (method === 'GET') app.get(path, ...handlers);
    else if (method === 'POST') app.post(path, ...handlers);
    else app.options(path, ...handlers);
  };

  const write = authenticate(deps.keyRing, 'ingest', deps.intakeMetrics);
  // What shows stored data: the read API, /pipeline and the console (protected mode first).
  const read: RequestHandler[] = [
    ...(deps.loopbackReadersOnly === true ? [loopbackOnly()] : []),
    authenticate(deps.keyRing, 'read', deps.intakeMetrics),
  ];
  const guardFiles = deps.loopbackReadersOnly === true ? [loopbackOnly()] : [];
  if (deps.corsOrigins.length > 0) {
    const allowCors = cors(deps.corsOrigins);
    route('OPTIONS', PATHS.events, allowCors);
    route('POST', PATHS.events, allowCors, write, postEvents(handle));
  } else {
    route('POST', PATHS.events, write, postEvents(handle));
  }
  if (deps.sentry !== undefined) {
    const sentryDeps = {
      intake: deps.sentry.intake,
      keyRing: deps.keyRing,
      projects: deps.sentry.projects,
      maxBodyBytes: deps.maxBodyBytes,
      turns: deps.turns,
      intakeMetrics: deps.intakeMetrics,
      sentryMetrics: deps.sentry.metrics,
    };
    // Browser SDKs read the rate limits from the answer, and may send the key in X-Sentry-Auth.
    const sentryCors =
      deps.corsOrigins.length > 0
        ? [
            cors(deps.corsOrigins, CORS_METHODS.sentry, {
              expose: RATE_LIMITS_HEADER,
              allow: 'X-Sentry-Auth',
            }),
          ]
        : [];
    for (const endpoint of ['envelope', 'store'] as const) {
      if (sentryCors.length > 0) route('OPTIONS', SENTRY_PATHS[endpoint], ...sentryCors);
      route('POST', SENTRY_PATHS[endpoint], ...sentryCors, postSentry(endpoint, sentryDeps));
    }
  }
  // The read API: CORS for the same origins as ingest (GET from dashboards on other origins).
  const readCors =
    deps.corsOrigins.length > 0 ? [cors(deps.corsOrigins, CORS_METHODS.read)] : ([] as RequestHandler[]);
  const eventsCors =
    deps.corsOrigins.length > 0 ? [cors(deps.corsOrigins, CORS_METHODS.events)] : ([] as RequestHandler[]);
  const nextSlice = (): Promise<void> => deps.readTurns.wait();
  const reads: Array<[string, RequestHandler[], RequestHandler]> = [
    [PATHS.events, eventsCors, getEvents(deps.storage, nextSlice)],
    [PATHS.metrics, readCors, getMetrics(deps.storage, deps.metricResolutions ?? ['raw'], nextSlice)],
    [PATHS.metricNames, readCors, getMetricNames(deps.storage, deps.clock, nextSlice)],
    [PATHS.apps, readCors, getApps(deps.storage, deps.clock, nextSlice)],
    [PATHS.errorGroups, readCors, getErrorGroups(deps.storage, deps.clock, nextSlice)],
    [PATHS.outcomes, readCors, getOutcomes(deps.storage, deps.clock, deps.pendingHorizonMs, nextSlice)],
  ];
  const barrier =
    deps.acknowledgedSettled === undefined
      ? []
      : [readBarrier({ settled: deps.acknowledgedSettled, timeoutMs: READ_LIMITS.barrierTimeoutMs })];
  const routeScope = readRouteHeader();
  // A read's first turn, before its query: a read admitted while the loop lags would bring rows.
  const readTurn: RequestHandler = (_req, _res, next) => {
    void deps.readStarts.wait().then(() => next());
  };
  for (const [path, corsHandlers, handler] of reads) {
    if (corsHandlers.length > 0 && path !== PATHS.events) route('OPTIONS', path, ...corsHandlers);
    route('GET', path, ...corsHandlers, ...read, routeScope, ...barrier, readTurn, handler);
  }
  // Per process, like /metrics, but it names apps: a read key when auth is on.
  route('GET', PATHS.pipeline, ...read, getPipeline(deps.pipeline));
  // Static files, no data: the console asks for a read key when the API answers 401. In protected
  // mode the console is refused as a whole to other hosts, with the setting that opens it.
  for (const f of deps.consoleFiles) route('GET', f.path, ...guardFiles, consoleFile(f));
  if (deps.consoleMissing !== undefined) {
    const message = deps.consoleMissing;
    route('GET', PATHS.console, ...guardFiles, () => {
      throw new SluiceError('not_found', message);
    });
  }
  // Health and /metrics stay open: the load balancer and Prometheus need them; keep them off the public network.
  route('GET', PATHS.livez, livez());
  route('GET', PATHS.readyz, readyz(deps.readiness));
  route('GET', PATHS.prometheus, metricsText(deps.metrics.registry));

  app.use((req: Request, res: Response) => {
    const allow = allowed.allowOf(req.path);
    if (allow !== null) {
      res.setHeader('Allow', allow);
      sendError(
        res,
        new SluiceError('method_not_allowed', `${req.path} answers ${allow}, not ${req.method}.`),
        req.context,
      );
      return;
    }
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
