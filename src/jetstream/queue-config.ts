import { ConfigError, type Config } from '../config/load';
import { queueTopology, type ConsumerLimits, type QueueTopology, type StreamLimits } from './topology';

/** What tier 4 needs from the config, checked once at start. */
export interface QueueConfig {
  readonly servers: readonly string[];
  readonly topology: QueueTopology;
  readonly streamLimits: StreamLimits;
  readonly consumerLimits: ConsumerLimits;
}

/**
 * Checks the settings that only make sense together, for an ingest-mode collector or a worker:
 * - `SLUICE_NATS_URL` is required;
 * - `SLUICE_DATABASE_URL` is required: workers write to PostgreSQL (tier 4 is PostgreSQL only),
 *   and an ingest collector's read API must read the database the workers write — falling back to
 *   a local SQLite file would answer reads from an empty database;
 * - a collector's `SLUICE_NATS_MAX_PENDING_ACKS` must hold the largest request
 *   (`SLUICE_MAX_EVENTS_PER_REQUEST`), or such a request could never be taken.
 */
export function queueConfig(config: Config, role: 'collector' | 'worker'): QueueConfig {
  const why = role === 'worker' ? 'by sluice worker' : 'with SLUICE_MODE=ingest';
  if (config.natsUrl === null) {
    throw new ConfigError('SLUICE_NATS_URL', '', `is required ${why} (e.g. nats://127.0.0.1:4222)`);
  }
  if (config.databaseUrl === null) {
    throw new ConfigError(
      'SLUICE_DATABASE_URL',
      '',
      role === 'worker'
        ? 'is required by sluice worker: workers write to PostgreSQL'
        : 'is required with SLUICE_MODE=ingest: the read API reads the PostgreSQL database the workers write',
    );
  }
  if (role === 'collector' && config.natsMaxPendingAcks < config.maxEventsPerRequest) {
    throw new ConfigError(
      'SLUICE_NATS_MAX_PENDING_ACKS',
      String(config.natsMaxPendingAcks),
      `must be at least SLUICE_MAX_EVENTS_PER_REQUEST (${config.maxEventsPerRequest})`,
    );
  }
  return {
    servers: config.natsUrl,
    topology: queueTopology(config.natsStream, config.natsSubjectPrefix),
    streamLimits: {
      maxBytes: config.natsMaxBytes,
      maxAgeMs: config.natsMaxAgeMs,
      duplicateWindowMs: config.natsDuplicateWindowMs,
      deadLetterMaxAgeMs: config.natsDeadLetterMaxAgeMs,
      replicas: config.natsReplicas,
    },
    consumerLimits: { ackWaitMs: config.workerAckWaitMs, maxAckPending: config.workerMaxAckPending },
  };
}
