import type { Clock } from '../clock';
import type { Config } from '../config/load';
import { IntakeService } from '../intake/intake-service';
import type { Readiness } from '../lifecycle/readiness';
import type { Logger } from '../log/logger';
import type { Metrics } from '../metrics/instruments';
import { createQueueMetrics } from '../metrics/queue-instruments';
import { AsyncPublisher } from '../jetstream/async-publisher';
import { compactFromScan } from '../jetstream/compact-from-scan';
import { JetStreamSink, type MessageElement } from '../jetstream/jetstream-sink';
import type { QueueConfig } from '../jetstream/queue-config';
import { ensureStreams } from '../jetstream/topology';
import type { Intake } from './intake-parts';
import { exitOnConfigError, startJetStream, type JetStreamParts } from './jetstream';

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
export function startQueueIntake(
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
    // The single pass writes each event's message element from the body's bytes.
    service: (shared) => new IntakeService<MessageElement>({ ...shared, sink, rowFromScan: compactFromScan }),
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
