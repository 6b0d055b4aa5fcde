import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type { Clock } from '../clock';
import { ConfigError, type Config } from '../config/load';
import type { Readiness } from '../lifecycle/readiness';
import { keepTrying } from '../lifecycle/startup';
import type { Logger } from '../log/logger';
import type { QueueMetrics } from '../metrics/queue-instruments';
import { JetStreamMonitor } from '../jetstream/jetstream-monitor';
import { connectNats } from '../jetstream/nats-connection';
import type { QueueConfig } from '../jetstream/queue-config';
import { describePlacement, logStreamReports } from '../jetstream/stream-reports';
import { StreamPlacementError, type StreamReport } from '../jetstream/topology';

export interface JetStreamParts {
  readonly nc: NatsConnection;
  readonly jsm: JetStreamManager;
  /** Started; drives `readiness` and the queue metrics. */
  readonly monitor: JetStreamMonitor;
}

/** Tier 4's link to JetStream, brought up in the background while the process already listens. */
export interface JetStreamLink {
  /**
   * Resolves once connected, with the streams (and a worker's consumers) in place and the first
   * check run; null when closed before. Never rejects.
   */
  readonly ready: Promise<JetStreamParts | null>;
  /** Ends the bring-up, or stops the monitor and drains the connection. Idempotent. */
  close(): Promise<void>;
}

/**
 * The `onFatal` of a process: logs the setting that cannot work (as the CLI reports a bad value)
 * and exits 2 once the line is written.
 */
export function exitOnConfigError(logger: Logger, exit: (code: number) => void): (err: ConfigError) => void {
  return (err) => {
    logger.fatal({ variable: err.variable }, `invalid configuration: ${err.message}`);
    logger.flush(() => exit(2));
  };
}

/** Whether the server a client reached belongs to a cluster, and how many servers it knows of. */
function clusterOf(nc: NatsConnection): { clustered: boolean; knownServers: number } {
  const info = nc.info;
  return { clustered: Boolean(info?.cluster), knownServers: info?.connect_urls?.length ?? 1 };
}

/**
 * Tier 4 start-up shared by ingest collectors and workers, in the background: connect to NATS,
 * reach JetStream and make what this process needs (`ensure`), each retried for as long as it
 * takes (`keepTrying`: the process listens meanwhile, `/readyz` 503), then report what was found
 * in the streams, hand the parts to `onReady` and start the check that drives readiness.
 * `SLUICE_NATS_REPLICAS` above 1 on a server that is not clustered cannot work at all: `onFatal`.
 */
export function startJetStream(
  config: Config,
  queue: QueueConfig,
  o: {
    /** Connection name seen by the NATS server (`sluice-collector`, `sluice-worker`). */
    readonly name: string;
    /** Creates or updates what this process needs; also run by the monitor when it finds the stream gone. */
    readonly ensure: (jsm: JetStreamManager) => Promise<StreamReport[]>;
    /** Workers watch their consumers too. */
    readonly watchConsumers: boolean;
    /** Called once, before the first check can make the process ready. */
    readonly onReady: (parts: JetStreamParts) => void;
    /** A configuration that can never work: log it and exit. */
    readonly onFatal: (err: ConfigError) => void;
    readonly readiness: Readiness;
    readonly metrics: QueueMetrics;
    readonly clock: Clock;
    readonly logger: Logger;
  },
): JetStreamLink {
  const { logger } = o;
  const replicas = queue.streamLimits.replicas;
  const abort = new AbortController();
  let nc: NatsConnection | null = null;
  let monitor: JetStreamMonitor | null = null;

  const notClustered = (url: string): ConfigError =>
    new ConfigError(
      'SLUICE_NATS_REPLICAS',
      String(replicas),
      `cannot be met: the NATS server at ${url} is not clustered (a stream on one server has 1 replica). ` +
        'Set SLUICE_NATS_REPLICAS=1, or list the servers of a JetStream cluster in SLUICE_NATS_URL',
    );

  const bringUp = async (): Promise<JetStreamParts | null> => {
    const signal = abort.signal;
    nc = await keepTrying(
      'connect to NATS',
      () =>
        connectNats({
          servers: queue.servers,
          name: o.name,
          timeoutMs: config.natsPublishTimeoutMs,
          logger: logger.child({ component: 'nats' }),
        }),
      { logger, signal },
    );
    if (nc === null || signal.aborted) return null;
    const connected = nc;
    const server = connected.getServer();
    if (replicas > 1 && !clusterOf(connected).clustered) throw notClustered(server);
    const jsm = await keepTrying(
      'reach JetStream',
      () => jetstreamManager(connected, { timeout: config.natsPublishTimeoutMs }),
      { logger, signal },
    );
    if (jsm === null || signal.aborted) return null;
    const ensure = async (): Promise<void> => {
      logStreamReports(await o.ensure(jsm), clusterOf(connected).clustered, logger);
    };
    const made = await keepTrying('create the stream', ensure, {
      logger,
      signal,
      fatal: (err) => err instanceof StreamPlacementError && err.kind === 'not_clustered',
      describe: (err) =>
        err instanceof StreamPlacementError
          ? describePlacement(err, clusterOf(connected).knownServers)
          : { fields: { err }, message: err instanceof Error ? err.message : String(err) },
    }).then(
      (r) => r !== null,
      (err: unknown) => {
        throw err instanceof StreamPlacementError ? notClustered(server) : err;
      },
    );
    if (!made || signal.aborted) return null;
    monitor = new JetStreamMonitor({
      nc: connected,
      jsm,
      topology: queue.topology,
      watchConsumers: o.watchConsumers,
      recreate: ensure,
      onChange: (up) => o.readiness.setDependencyUp(up),
      intervalMs: config.healthIntervalMs,
      timeoutMs: config.natsPublishTimeoutMs,
      clock: o.clock,
      metrics: o.metrics,
      logger: logger.child({ component: 'jetstream' }),
    });
    const parts = { nc: connected, jsm, monitor };
    o.onReady(parts);
    await monitor.start();
    return parts;
  };

  const ready = bringUp().catch((err: unknown) => {
    if (err instanceof ConfigError) o.onFatal(err);
    else logger.fatal({ err }, 'JetStream start-up failed');
    return null;
  });
  let closing: Promise<void> | null = null;
  return {
    ready,
    close() {
      closing ??= (async () => {
        abort.abort();
        await ready;
        await monitor?.stop();
        // drain: every publish and ack sent has reached the server before the connection closes.
        if (nc !== null && !nc.isClosed()) await nc.drain();
      })();
      return closing;
    },
  };
}
