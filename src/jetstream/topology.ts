import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import type { LaneName } from '../intake/event-sink';
import { streamDifferences, type ManagedStreamConfig, type StreamDifference } from './stream-differences';

/** Names of the stream, subjects and consumers, all derived from two settings. */
export interface QueueTopology {
  /** Work-queue stream the collectors publish to. */
  readonly stream: string;
  /** Subject of each lane: `<prefix>.error`, `<prefix>.standard`. */
  readonly subjects: Readonly<Record<LaneName, string>>;
  /** Durable pull consumer of each lane: `<stream>_error`, `<stream>_standard`. */
  readonly consumers: Readonly<Record<LaneName, string>>;
  /** Limits-retention stream of dead letters, `<stream>_DEAD`. */
  readonly deadLetterStream: string;
  /** `<prefix>.dead`. */
  readonly deadLetterSubject: string;
}

export function queueTopology(stream: string, subjectPrefix: string): QueueTopology {
  return {
    stream,
    subjects: { error: `${subjectPrefix}.error`, standard: `${subjectPrefix}.standard` },
    consumers: { error: `${stream}_error`, standard: `${stream}_standard` },
    deadLetterStream: `${stream}_DEAD`,
    deadLetterSubject: `${subjectPrefix}.dead`,
  };
}

export interface StreamLimits {
  /** Stream size limit (bytes); discard new beyond it. */
  readonly maxBytes: number;
  /**
   * `SLUICE_NATS_MAX_AGE` (milliseconds): oldest event written; the workers enforce it and count
   * what they expire. The stream keeps messages longer (`streamMaxAgeMs`).
   */
  readonly maxAgeMs: number;
  /** Window in which a repeated `Nats-Msg-Id` is dropped (milliseconds). */
  readonly duplicateWindowMs: number;
  /** How long dead letters are kept (milliseconds). */
  readonly deadLetterMaxAgeMs: number;
  /** Copies of each message when a stream is created (1, 3 or 5); an existing stream keeps its own. */
  readonly replicas: number;
}

export interface ConsumerLimits {
  /** Redelivery after this long without an ack (milliseconds). */
  readonly ackWaitMs: number;
  /** Most messages delivered and not yet acked, over all workers of the consumer. */
  readonly maxAckPending: number;
}

const HOUR_MS = 3_600_000;

/**
 * The event stream's own max age, from `SLUICE_NATS_MAX_AGE`: twice it, and at least an hour
 * more. The workers enforce the setting, counting the events they expire in the loss map; what the
 * stream removes on its own is gone unread, so it does so only when no worker took a message for
 * that long (the stream's oldest message is `sluice_queue_stream_oldest_age_seconds`).
 */
export function streamMaxAgeMs(maxAgeMs: number): number {
  return maxAgeMs + Math.max(maxAgeMs, HOUR_MS);
}

/** JetStream API error codes this module acts on. */
const STREAM_NOT_FOUND = 10059;
const STREAM_NAME_IN_USE = 10058;
const CONSUMER_NOT_FOUND = 10014;
/** "replicas > 1 not supported in non-clustered mode". */
const REPLICAS_NOT_CLUSTERED = 10074;
/** "no suitable peers for placement" / "insufficient resources": too few servers for the replicas. */
const NO_SUITABLE_PEERS = 10005;
const INSUFFICIENT_RESOURCES = 10023;

export function apiErrorCode(err: unknown): number | null {
  return err instanceof JetStreamApiError ? err.code : null;
}

export function isStreamNotFound(err: unknown): boolean {
  return apiErrorCode(err) === STREAM_NOT_FOUND;
}

/**
 * JetStream cannot place a stream on `replicas` servers: `not_clustered`, the server is a single
 * node (no retry can help); `too_few_servers`, fewer servers with JetStream are up than replicas
 * (more may come up).
 */
export class StreamPlacementError extends Error {
  constructor(
    readonly stream: string,
    readonly replicas: number,
    readonly kind: 'not_clustered' | 'too_few_servers',
    cause: unknown,
  ) {
    super(
      `JetStream cannot place stream ${stream} on ${replicas} servers: ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
    this.name = 'StreamPlacementError';
  }
}

/** What `ensureStreams` found and did for one stream. */
export interface StreamReport {
  readonly stream: string;
  readonly created: boolean;
  /** Replicas of the stream now, and the configured value. */
  readonly replicas: { readonly stream: number; readonly setting: number };
  /** Settings the existing stream differed in, now updated to the configured values. */
  readonly updated: Readonly<Record<string, StreamDifference>>;
}

/**
 * Creates `wanted.name`, or brings the existing stream's settings to `wanted` except its replicas
 * (see `streamDifferences`); updates only when something differs. Two processes starting at once
 * may both try to create it: the loser reads it instead. A change JetStream cannot make in place
 * (e.g. another retention policy) rejects with JetStream's own message.
 */
async function ensureStream(jsm: JetStreamManager, wanted: ManagedStreamConfig): Promise<StreamReport> {
  for (let attempt = 0; ; attempt++) {
    let existing: Partial<StreamConfig> | null = null;
    try {
      existing = (await jsm.streams.info(wanted.name)).config;
    } catch (err) {
      if (!isStreamNotFound(err)) throw err;
    }
    if (existing !== null) {
      const { update, kept } = streamDifferences(existing, wanted);
      if (Object.keys(update).length > 0) {
        const { num_replicas: _kept, ...settings } = wanted;
        await jsm.streams.update(wanted.name, settings);
      }
      return {
        stream: wanted.name,
        created: false,
        replicas: {
          stream: (kept.num_replicas?.stream as number | undefined) ?? wanted.num_replicas,
          setting: wanted.num_replicas,
        },
        updated: update,
      };
    }
    try {
      await jsm.streams.add(wanted);
      return {
        stream: wanted.name,
        created: true,
        replicas: { stream: wanted.num_replicas, setting: wanted.num_replicas },
        updated: {},
      };
    } catch (err) {
      const code = apiErrorCode(err);
      if (code === REPLICAS_NOT_CLUSTERED) {
        throw new StreamPlacementError(wanted.name, wanted.num_replicas, 'not_clustered', err);
      }
      if (code === NO_SUITABLE_PEERS || code === INSUFFICIENT_RESOURCES) {
        throw new StreamPlacementError(wanted.name, wanted.num_replicas, 'too_few_servers', err);
      }
      if (code !== STREAM_NAME_IN_USE || attempt >= 2) throw err;
    }
  }
}

/**
 * The event stream: work-queue retention (a message leaves when a worker acks it, so the size
 * limit measures the backlog, not history), file storage, discard new (a full stream refuses
 * publishes, which collectors turn into 429), a max age past `SLUICE_NATS_MAX_AGE`
 * (`streamMaxAgeMs`) and the duplicate window that makes retried publishes free. Plus the dead-letter stream, limits retention, discard old. Both with
 * `limits.replicas` copies when created; their consumers follow.
 */
export async function ensureStreams(
  jsm: JetStreamManager,
  topology: QueueTopology,
  limits: StreamLimits,
): Promise<StreamReport[]> {
  const events = await ensureStream(jsm, {
    name: topology.stream,
    subjects: [topology.subjects.error, topology.subjects.standard],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    discard: DiscardPolicy.New,
    max_bytes: limits.maxBytes,
    max_age: nanos(streamMaxAgeMs(limits.maxAgeMs)),
    // The duplicate window may not exceed the stream's max age.
    duplicate_window: nanos(Math.min(limits.duplicateWindowMs, limits.maxAgeMs)),
    num_replicas: limits.replicas,
  });
  const dead = await ensureStream(jsm, {
    name: topology.deadLetterStream,
    subjects: [topology.deadLetterSubject],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    max_bytes: limits.maxBytes,
    max_age: nanos(limits.deadLetterMaxAgeMs),
    duplicate_window: nanos(Math.min(limits.duplicateWindowMs, limits.deadLetterMaxAgeMs)),
    num_replicas: limits.replicas,
  });
  return [events, dead];
}

/**
 * One durable pull consumer per lane, created or updated. `max_deliver` stays unlimited: the
 * worker counts deliveries itself and moves a message that keeps failing to the dead-letter
 * subject, where JetStream would only stop delivering it and leave it in the work queue.
 * `num_replicas` is left unset: a consumer then has its stream's replicas (a work-queue stream
 * requires that), so its ack state survives what the stream survives.
 */
export async function ensureConsumers(
  jsm: JetStreamManager,
  topology: QueueTopology,
  limits: ConsumerLimits,
): Promise<void> {
  for (const lane of ['error', 'standard'] as const) {
    const durable = topology.consumers[lane];
    const tunable = {
      ack_wait: nanos(limits.ackWaitMs),
      max_ack_pending: limits.maxAckPending,
      max_deliver: -1,
    };
    try {
      await jsm.consumers.info(topology.stream, durable);
    } catch (err) {
      if (apiErrorCode(err) !== CONSUMER_NOT_FOUND) throw err;
      const config: Partial<ConsumerConfig> = {
        durable_name: durable,
        filter_subject: topology.subjects[lane],
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ...tunable,
      };
      // A worker starting at the same moment may have created it: adding the same config again is a no-op.
      await jsm.consumers.add(topology.stream, config);
      continue;
    }
    await jsm.consumers.update(topology.stream, durable, tunable);
  }
}
