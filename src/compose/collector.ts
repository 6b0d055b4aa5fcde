/**
 * Assembly of one collector from a validated config: part of the composition
 * root (the CLI calls it; integration tests start collectors in-process with
 * it). Nothing else constructs components.
 */
import type { IncomingMessage, Server } from 'node:http';
import { createRateLimitsAndKeys } from './rate-limits-and-keys';
import { systemClock, type Clock } from '../clock';
import type { Config } from '../config/load';
import { createApp } from '../http/app';
import { isEventsIngest, withOverloadGate } from '../http/overload-gate';
import { isSentryIngest } from '../http/sentry/post-sentry';
import { RefusalEpisodes } from '../http/refusal-episodes';
import { listen } from '../http/server';
import { ShedRule } from '../intake/shed-rule';
import { TurnOrder } from '../intake/turn-order';
import { requestFlow } from '../http/request-flow';
import { SamplingAdvisor } from '../intake/sampling-advice';
import { AppBound } from '../intake/app-bound';
import { EventLoopLag } from '../intake/event-loop-lag';
import { Readiness } from '../lifecycle/readiness';
import { Shutdown } from '../lifecycle/shutdown';
import type { Logger } from '../log/logger';
import { createMetrics, type Metrics } from '../metrics/instruments';
import { queueConfig } from '../jetstream/queue-config';
import { streamMaxAgeMs } from '../jetstream/topology';
import type { Storage } from '../storage/port';
import { eventLimits, openStorage, prepareStorageInBackground } from './storage';
import type { RunningOtlpServer } from '../http/otlp/otlp-server';
import { startOtlpReceiver } from './otlp-receiver';
import { sentryFront } from './sentry-front';
import { startLine } from './start-line';
import { startLaneIntake } from './lane-intake';
import { startQueueIntake } from './queue-intake';
import { reportReader, shedCounter, startOutcomeRecorder } from './outcomes';
import type { CountSink } from '../loss-map/event-outcomes';
import { AppActivity, OTHER_APPS } from '../metrics/app-activity';
import { PeriodicTask } from '../lifecycle/periodic-task';
import { PipelineState, type PipelineSources } from '../metrics/pipeline-state';
import { consoleDistDir, loadConsoleFiles, type ConsoleFile } from '../console/assets';

export interface CollectorDeps {
  readonly logger: Logger;
  /** Default: the system clock. */
  readonly clock?: Clock;
  /** Called when shutdown ends (0: clean, 1: forced). Default: `process.exit`. */
  readonly exit?: (code: number) => void;
}

/** A listening collector. */
export interface RunningCollector {
  readonly url: string;
  readonly port: number;
  readonly server: Server;
  /** The OTLP/HTTP receiver; null when `SLUICE_OTLP_PORT` is 0. */
  readonly otlp: RunningOtlpServer | null;
  readonly metrics: Metrics;
  readonly storage: Storage;
  /** Starts the shutdown sequence (a second call forces exit). */
  shutdown(reason: string): void;
}

/** How often the pipeline state is sampled (milliseconds): the console's pipeline view redraws at this pace. */
const PIPELINE_SAMPLE_MS = 1000;

/** The built console, or why `/` cannot serve it (logged once). */
function openConsole(logger: Logger): { files: ConsoleFile[]; missing?: string } {
  const dir = consoleDistDir();
  try {
    if (dir === null) throw new Error('no package.json above the collector');
    return { files: loadConsoleFiles(dir) };
  } catch (err) {
    const missing = `The console is not available: ${(err as Error).message}. SLUICE_CONSOLE=off turns it off.`;
    logger.warn({ err }, 'console not available');
    return { files: [], missing };
  }
}

export async function startCollector(config: Config, deps: CollectorDeps): Promise<RunningCollector> {
  const { logger } = deps;
  const clock = deps.clock ?? systemClock;
  const exit = deps.exit ?? ((code: number) => process.exit(code));
  // Checked before anything is opened: ingest mode without NATS or PostgreSQL is a ConfigError.
  const queue = config.mode === 'ingest' ? queueConfig(config, 'collector') : null;
  const metrics = createMetrics();
  const limitsAndKeys = createRateLimitsAndKeys(config, metrics.registry, clock, logger);
  const storage = openStorage(config, logger, clock, metrics.registry, { servesReads: true });
  const readiness = new Readiness(metrics, queue !== null ? 'jetstream' : 'storage');
  // In queue mode the database is prepared in the background; the recorder writes once it is.
  const preparation =
    queue === null
      ? null
      : prepareStorageInBackground(config, storage, logger.child({ component: 'storage' }), exit);
  const recorder = startOutcomeRecorder(config, storage, metrics.registry, clock, logger, preparation?.ready);
  const outcomes = recorder === null ? undefined : (c: Parameters<CountSink>[0]) => recorder.count(c);
  const intake =
    queue !== null && preparation !== null
      ? startQueueIntake(config, queue, preparation, readiness, metrics, clock, logger, exit)
      : await startLaneIntake(config, storage, readiness, metrics, clock, logger, outcomes);

  const loopLag = new EventLoopLag({ gauge: metrics.eventLoopLag });
  loopLag.start();
  const turns = new TurnOrder();
  // Reads take turns in a line of their own: ingest's wait for a turn, which the shed rule
  // counts, never holds a read, and reads share a bounded slice of each loop iteration. A read
  // starts (before its query) in a line held while the loop lags half the shedding delay: reads
  // slow down before any ingest request could be refused for the lag they add; a read once
  // started is never held.
  const readTurns = new TurnOrder();
  const readStarts = new TurnOrder(
    config.shedLagMs > 0 ? { holdWhile: () => loopLag.standingMs() >= config.shedLagMs / 2 } : {},
  );
  const refusals = new RefusalEpisodes({ logger, clock });
  const activity = new AppActivity();
  const pipeline = new PipelineState({
    mode: config.mode,
    storage: storage.kind,
    metrics,
    ...intake.state,
    activity,
    limitPerSecond: (app) => {
      const limit = app === OTHER_APPS ? 0 : limitsAndKeys.limits.limitFor(app);
      return limit > 0 ? limit : null;
    },
    health: () => ({
      ready: readiness.notReadyReason() === null,
      draining: readiness.draining,
      storage: queue !== null ? 'not_checked' : readiness.dependencyUp ? 'up' : 'down',
      redis: limitsAndKeys.redisHealth(),
      nats: queue === null ? 'off' : readiness.dependencyUp ? 'up' : 'down',
    }),
    clock,
    ...(storage.kind === 'postgres' && storage.readStandby !== null
      ? { readStandby: storage.readStandby }
      : {}),
  });
  await pipeline.sample();
  const sampler = new PeriodicTask('pipeline state', PIPELINE_SAMPLE_MS, () => pipeline.sample(), logger);
  sampler.start();
  const consoleFiles = config.console === 'on' ? openConsole(logger) : { files: [] };
  const apps = new AppBound(config.maxAppsPerMinute);
  metrics.onCollect(() => limitsAndKeys.metrics.appsAdmitted.set(apps.admittedIn(clock.now())));
  const ingest = intake.service({
    limits: eventLimits(config),
    apps,
    maxEventsPerRequest: config.maxEventsPerRequest,
    rateLimiter: limitsAndKeys.rateLimiter,
    intakeMetrics: limitsAndKeys.metrics,
    clock,
    metrics,
    activity,
    outcomes,
    advisor: new SamplingAdvisor({
      limits: limitsAndKeys.rateLimiter === null ? null : limitsAndKeys.limits,
      // With Redis each collector sees about its share of an app's requests (no sticky sessions).
      instances: config.redisUrl === null ? 1 : config.expectedInstances,
      drainPerSecond: drainOf(intake.state.writer),
    }),
  });
  const limits = eventLimits(config);
  const app = createApp({
    ingest,
    storage,
    clock,
    // A message may wait in the stream until the stream's own max age removes it.
    pendingHorizonMs: Math.max(
      config.outcomesPendingHorizonMs,
      queue === null ? 0 : streamMaxAgeMs(config.natsMaxAgeMs),
    ),
    pipeline,
    consoleFiles: consoleFiles.files,
    consoleMissing: consoleFiles.missing,
    readiness,
    metrics,
    intakeMetrics: limitsAndKeys.metrics,
    keyRing: limitsAndKeys.keyRing,
    loopbackReadersOnly: limitsAndKeys.keyRing === null && config.protectedMode === 'on',
    corsOrigins: config.corsOrigins ?? [],
    logger,
    maxBodyBytes: config.maxBodyBytes,
    maxJsonDepth: config.maxJsonDepth,
    maxEventsPerRequest: config.maxEventsPerRequest,
    maxAttributes: config.maxAttributes,
    turns,
    readTurns,
    readStarts,
    refusals,
    readReport: reportReader(recorder, limits.maxSourceLength, logger, { bound: apps, clock }),
    acknowledgedSettled: intake.acknowledgedSettled,
    sentry: sentryFront(config, ingest, recorder, apps, metrics.registry, clock),
    // On PostgreSQL another instance may be the one downsampling, so rollups are served regardless.
    metricResolutions:
      config.databaseUrl !== null || config.scheduler === 'on' ? ['raw', '1m', '1h'] : ['raw'],
  });
  const shed = new ShedRule({
    waitsMs: [() => loopLag.standingMs(), () => turns.oldestWaitMs()],
    shedAtMs: config.shedLagMs,
    rejected: metrics.requestsRejected,
    flowOf: requestFlow(limitsAndKeys.keyRing),
    ...(recorder === null ? {} : { countRefused: shedCounter(recorder, limitsAndKeys.keyRing, clock) }),
  });
  // Sentry SDKs read a 429's Retry-After as "hold back everything for that long".
  const isIngest = (req: IncomingMessage): boolean => isEventsIngest(req) || isSentryIngest(req);
  const { server, port, url } = await listen(withOverloadGate(app, shed, isIngest), config, config.port, {
    variable: 'SLUICE_PORT',
  });
  const otlp = await startOtlpReceiver({
    config,
    ingest,
    shed,
    keyRing: limitsAndKeys.keyRing,
    metrics,
    turns,
    draining: () => readiness.draining,
    refusals,
    intakeMetrics: limitsAndKeys.metrics,
    clock,
    logger,
  });

  const shutdown = new Shutdown({
    readiness,
    servers: otlp ? [server, otlp.server] : [server],
    flusher: intake.flusher,
    ...(recorder === null ? {} : { lossMap: recorder }),
    closers: [
      ...intake.closers,
      // After the lanes' flush (refused rows are counted there), before storage closes.
      { name: 'loss map', close: () => recorder?.stop() },
      { name: 'storage', close: () => storage.close() },
      { name: 'rate limiter', close: () => limitsAndKeys.close() },
      { name: 'event loop lag', close: () => loopLag.stop() },
      { name: 'refusal log', close: () => refusals.close() },
      { name: 'pipeline state', close: () => sampler.close() },
    ],
    drainDelayMs: config.drainDelayMs,
    graceMs: config.shutdownGraceMs,
    timeoutMs: config.shutdownTimeoutMs,
    logger,
    exit,
  });
  const line = startLine(config, {
    url,
    port,
    otlpPort: otlp?.port ?? null,
    keys: limitsAndKeys.keyRing !== null,
  });
  logger.info(line.fields, line.message);
  return {
    url,
    port,
    server,
    otlp,
    metrics,
    storage,
    shutdown: (reason) => shutdown.trigger(reason),
  };
}

/** What the writer drains (events per second), when this intake has one (not in queue mode). */
function drainOf(writer: PipelineSources['writer']): (() => number) | null {
  return writer === null ? null : () => writer().drainPerSecond;
}
