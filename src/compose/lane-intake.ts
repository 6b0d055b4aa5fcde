import type { Clock } from '../clock';
import type { Config } from '../config/load';
import { IntakeService } from '../intake/intake-service';
import type { Readiness } from '../lifecycle/readiness';
import { StorageHealthMonitor } from '../lifecycle/readiness';
import type { Logger } from '../log/logger';
import { presetWriterSeries, type Metrics } from '../metrics/instruments';
import { createStorageUpGauge } from '../metrics/storage-instruments';
import type { CountSink } from '../loss-map/event-outcomes';
import { WRITER_BACKOFF } from '../writer/backoff';
import { BatchWriterLoop } from '../lanes/batch-writer-loop';
import { BoundedLane } from '../lanes/lane';
import { LaneSink } from '../lanes/lane-sink';
import type { Intake } from './intake-parts';
import { startJobs } from './scheduler';
import { prepareStorage, type OpenedStorage } from './storage';

/** Tiers 1–3: bounded lanes in this process, drained by the single writer loop into storage. */
export async function startLaneIntake(
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

  const jobs = startJobs(config, storage, clock, logger, metrics);

  const sink = new LaneSink({
    errorLane,
    standardLane,
    writer,
    ack: config.ack,
    ackTimeoutMs: config.ackTimeoutMs,
    storageUp: () => readiness.dependencyUp,
    toRow: (event) => storage.toRow(event),
    shareRefusals: metrics.laneShareRefusals,
  });
  // The single pass (events/scan/) writes COPY rows when this storage makes its rows so (tiers
  // 2–3 on PostgreSQL's copy method).
  const { rowFromScan } = storage;
  return {
    service: (shared) =>
      new IntakeService({ ...shared, sink, ...(rowFromScan === undefined ? {} : { rowFromScan }) }),
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
