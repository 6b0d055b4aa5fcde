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
import type { EventSink } from '../intake/event-sink';
import { IntakeService, type IntakeServiceOptions } from '../intake/intake-service';
import { SamplingAdvisor } from '../intake/sampling-advice';
import { AppBound } from '../intake/app-bound';
import { compactFromScan } from '../jetstream/compact-from-scan';
import { LaneSink } from '../lanes/lane-sink';
import { EventLoopLag } from '../intake/event-loop-lag';
import { Readiness, StorageHealthMonitor } from '../lifecycle/readiness';
import { createStorageUpGauge } from '../metrics/storage-instruments';
import { Shutdown, type ShutdownOptions } from '../lifecycle/shutdown';
import type { Logger } from '../log/logger';
import { createMetrics, presetWriterSeries, type Metrics } from '../metrics/instruments';
import { createQueueMetrics } from '../metrics/queue-instruments';
import { WRITER_BACKOFF } from '../writer/backoff';
import { BatchWriterLoop } from '../lanes/batch-writer-loop';
import { BoundedLane } from '../lanes/lane';
import { AsyncPublisher } from '../jetstream/async-publisher';
import { JetStreamSink } from '../jetstream/jetstream-sink';
import { queueConfig, type QueueConfig } from '../jetstream/queue-config';
import { ensureStreams, streamMaxAgeMs } from '../jetstream/topology';
import type { Storage, StorageRow } from '../storage/port';
import { exitOnConfigError, startJetStream, type JetStreamParts } from './jetstream';
import { startJobs } from './scheduler';
import {
  eventLimits,
  openStorage,
  prepareStorage,
  prepareStorageInBackground,
  type OpenedStorage,
} from './storage';
import type { RunningOtlpServer } from '../http/otlp/otlp-server';
import { startOtlpReceiver } from './otlp-receiver';
import { sentryFront } from './sentry-front';
import { startLine } from './start-line';
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

/** What the collector's intake hands its events to, and what the shutdown sequence flushes. */
interface Intake {
  readonly sink: EventSink;
  /** The shutdown sequence's "flush" step (see src/lifecycle/shutdown.ts). */
  readonly flusher: ShutdownOptions['flusher'];
  /** Closed after the flush, in order, before storage. */
  readonly closers: ReadonlyArray<{ name: string; close(): Promise<void> | void }>;
  /** What the pipeline state reads of this intake. */
  readonly state: Pick<PipelineSources, 'lanes' | 'writer' | 'queue'>;
  /** The read barrier (`http/read-barrier.ts`); absent when this process holds no events. */
  readonly acknowledgedSettled?: () => Promise<void> | null;
}

/** Tiers 1–3: bounded lanes in this process, drained by the single writer loop into storage. */
async function startLaneIntake(
  config: Config,
  storage: OpenedStorage,
  readiness: Readiness,
  metrics: Metrics,
  clock: Clock,
  logger: Logger,
  outcomes: CountSink | undefined,
): Promise<Intake> {
  await prepareStorage(config, storage, logger);

  const errorLane = new BoundedLane('error', {
    maxEvents: config.errorLaneCapacity,
    maxBytes: config.errorLaneMaxBytes,
  });
  const standardLane = new BoundedLane('standard', {
    maxEvents: config.laneCapacity,
    maxBytes: config.laneMaxBytes,
  });
  for (const lane of [errorLane, standardLane]) {
    metrics.laneCapacity.set({ lane: lane.name }, lane.limits.maxEvents);
    metrics.laneCapacityBytes.set({ lane: lane.name }, lane.limits.maxBytes);
  }
  metrics.onCollect(() => {
    for (const lane of [errorLane, standardLane]) {
      metrics.laneDepth.set({ lane: lane.name }, lane.heldEvents);
      metrics.laneBytes.set({ lane: lane.name }, lane.heldBytes);
    }
  });

  presetWriterSeries(metrics, { dropsRows: true });
  const health = new StorageHealthMonitor({
    ping: () => storage.ping(),
    gauge: createStorageUpGauge(metrics.registry),
    readiness,
    intervalMs: config.healthIntervalMs,
    timeoutMs: config.storageTimeoutMs,
    logger: logger.child({ component: 'health' }),
  });
  const writer = new BatchWriterLoop({
    errorLane,
    standardLane,
    storage,
    batchSize: config.batchSize,
    flushIntervalMs: config.flushIntervalMs,
    writeWhenIdle: config.ack === 'stored',
    maxInFlight: config.writeConcurrency,
    backoff: WRITER_BACKOFF,
    health,
    clock,
    logger: logger.child({ component: 'writer' }),
    metrics,
    outcomes,
  });
  await health.start();
  writer.start();

  const jobs = startJobs(config, storage, clock, logger, metrics.registry);

  return {
    sink: new LaneSink({
      errorLane,
      standardLane,
      writer,
      ack: config.ack,
      ackTimeoutMs: config.ackTimeoutMs,
      storageUp: () => readiness.dependencyUp,
      toRow: (event) => storage.toRow(event),
      shareRefusals: metrics.laneShareRefusals,
    }),
    flusher: writer,
    // Storage known down: no wait, the read answers 503 at once.
    acknowledgedSettled: () => (readiness.dependencyUp ? writer.settled() : null),
    closers: [{ name: 'health', close: () => health.stop() }, ...jobs],
    state: {
      lanes: () =>
        [errorLane, standardLane].map((lane) => ({
          name: lane.name,
          events: lane.heldEvents,
          capacity: lane.limits.maxEvents,
          bytes: lane.heldBytes,
          capacityBytes: lane.limits.maxBytes,
        })),
      writer: () => ({
        inFlight: writer.writesInFlight.now,
        maxInFlight: writer.writesInFlight.max,
        drainPerSecond: writer.drainRate.perSecond(),
      }),
      queue: null,
    },
  };
}

/** Bytes of a message's `max_payload` left for its headers (the server counts them in). */
const MESSAGE_HEADERS_ROOM_BYTES = 1024;

/**
 * Tier 4 (`SLUICE_MODE=ingest`): events are published to JetStream and `sluice worker` writes
 * them. No lanes, no writer; readiness follows NATS, not the database, so intake keeps answering
 * while PostgreSQL is away. Storage is still opened for the read API and the loss map, on the
 * database the workers write (see `queueConfig`): it is created when missing and migrated in the
 * background, as a worker would (a database this role may not create stops the process). The
 * link to JetStream comes up in the background too: the collector listens at once and answers 503
 * (and `/readyz` 503) until the stream is usable.
 */
function startQueueIntake(
  config: Config,
  queue: QueueConfig,
  preparation: { close(): void },
  readiness: Readiness,
  metrics: Metrics,
  clock: Clock,
  logger: Logger,
  exit: (code: number) => void,
): Intake {
  if (config.ack === 'stored') {
    logger.warn('SLUICE_ACK=stored has no effect with SLUICE_MODE=ingest: 202 means persisted by JetStream');
  }
  const queueMetrics = createQueueMetrics(metrics.registry);
  let publisher: AsyncPublisher | null = null;
  let parts: JetStreamParts | null = null;
  const link = startJetStream(config, queue, {
    name: 'sluice-collector',
    ensure: (jsm) => ensureStreams(jsm, queue.topology, queue.streamLimits),
    watchConsumers: false,
    onReady: (ready) => {
      parts = ready;
      publisher = new AsyncPublisher(ready.nc);
    },
    onFatal: exitOnConfigError(logger, exit),
    readiness,
    metrics: queueMetrics,
    clock,
    logger,
  });
  const sink = new JetStreamSink({
    publisher: () => publisher,
    topology: queue.topology,
    maxPendingAcks: config.natsMaxPendingAcks,
    // Room for the headers (message id, event count) under the server's limit.
    maxPayloadBytes: () => (parts?.nc.info?.max_payload ?? 1024 * 1024) - MESSAGE_HEADERS_ROOM_BYTES,
    publishTimeoutMs: config.natsPublishTimeoutMs,
    up: () => readiness.dependencyUp,
    onUnavailable: () => parts?.monitor.checkNow(),
    drainPerSecond: () => parts?.monitor.drainRate.perSecond() ?? 0,
    metrics: queueMetrics,
  });
  return {
    sink,
    flusher: {
      // Requests in flight already waited for their acks; nothing is held in this process.
      stop: () => sink.drained(),
      abort: () => undefined,
      held: () => sink.pendingAcks,
      // A publish still waiting for its ack is JetStream's to keep or not: if the stream has it, a
      // worker stores it; if not, its events stay pending in the loss map (their request got no 202).
      dropHeld: () => 0,
    },
    closers: [
      { name: 'database preparation', close: () => preparation.close() },
      { name: 'publisher', close: () => publisher?.close() },
      { name: 'jetstream', close: () => link.close() },
    ],
    state: {
      lanes: () => [],
      writer: null,
      // Zeros until the link to JetStream is up.
      queue: () => ({
        streamMessages: parts?.monitor.streamState.messages ?? 0,
        streamBytes: parts?.monitor.streamState.bytes ?? 0,
        streamMaxBytes: parts?.monitor.streamState.maxBytes ?? 0,
        drainMessagesPerSecond: parts?.monitor.drainRate.perSecond() ?? 0,
        pendingAcks: sink.pendingAcks,
      }),
    },
  };
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
  const ingest = new IntakeService({
    limits: eventLimits(config),
    apps,
    maxEventsPerRequest: config.maxEventsPerRequest,
    sink: intake.sink,
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
    // The single pass (events/scan/) writes what the sink takes from the body's bytes: COPY rows
    // (tiers 2–3 on PostgreSQL's copy method), or in queue mode each event's message element.
    ...singlePassWriter(queue !== null, storage),
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

/** The row writer of the single pass for this intake, if it has one (see `IntakeServiceOptions.rowFromScan`). */
function singlePassWriter(queueMode: boolean, storage: Storage): Pick<IntakeServiceOptions, 'rowFromScan'> {
  if (queueMode) {
    // The JetStream sink reads these rows as message elements (jetstream/jetstream-sink.ts).
    return { rowFromScan: (body, event) => compactFromScan(body, event) as unknown as StorageRow };
  }
  return storage.rowFromScan === undefined ? {} : { rowFromScan: storage.rowFromScan };
}
