import type { Logger } from '../log/logger';
import type { StreamPlacementError, StreamReport } from './topology';

/**
 * Says what a start-up found in the streams (docs/ARCHITECTURE.md, "Queue mode on a cluster"):
 * a replica count that differs from `SLUICE_NATS_REPLICAS` (warn: kept as it is), settings brought
 * to the configured values (info), a stream created (info), and an unreplicated stream on a
 * cluster (warn: its events live on one server).
 */
export function logStreamReports(reports: readonly StreamReport[], clustered: boolean, logger: Logger): void {
  for (const r of reports) {
    const { stream, replicas } = r;
    if (r.created) logger.info({ stream, replicas: replicas.stream }, `stream ${stream} created`);
    if (replicas.stream !== replicas.setting) {
      logger.warn(
        { stream, replicas: { ...replicas, changed: false } },
        `stream ${stream} has ${replicas.stream} replicas and SLUICE_NATS_REPLICAS is ${replicas.setting}: ` +
          'left as it is (Sluice sets the replicas of a stream it creates, never of an existing one; ' +
          `to change them: nats stream edit ${stream} --replicas ${replicas.setting})`,
      );
    }
    if (Object.keys(r.updated).length > 0) {
      logger.info({ stream, updated: r.updated }, `stream ${stream} updated to the configured settings`);
    }
    if (clustered && replicas.stream === 1) {
      logger.warn(
        { stream, replicas: replicas.stream },
        `stream ${stream} has 1 replica on a JetStream cluster: its events live on one server, ` +
          'unreachable while that server is down (SLUICE_NATS_REPLICAS=3 for new streams)',
      );
    }
  }
}

/** The log line of a stream JetStream cannot place: what the setting asks for and what the cluster has. */
export function describePlacement(
  err: StreamPlacementError,
  knownServers: number,
): { fields: object; message: string } {
  return {
    fields: { stream: err.stream, replicas: err.replicas, knownServers },
    message:
      `SLUICE_NATS_REPLICAS=${err.replicas} needs ${err.replicas} servers with JetStream up; ` +
      `the client knows of ${knownServers} (${err.message}). Start more servers or lower SLUICE_NATS_REPLICAS`,
  };
}
