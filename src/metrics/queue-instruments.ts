import { Gauge, type Registry } from 'prom-client';
import { counter, gauge, histogram } from './define';

/**
 * Instruments of tier 4 (src/jetstream): the publishing side in ingest-mode collectors, the consuming
 * side in `sluice worker`. Each process registers all of them; a collector leaves the worker ones
 * at zero and the other way round. Labels are bounded: `consumer` is `error` or `standard`,
 * `result` and `reason` come from the fixed sets in their help texts.
 */
export function createQueueMetrics(registry: Registry) {
  const r = [registry];
  const collectHooks: Array<() => void> = [];
  return {
    /** Runs `hook` at every scrape, before the pending-acks gauge is read. */
    onCollect(hook: () => void): void {
      collectHooks.push(hook);
    },
    natsUp: gauge(
      registry,
      'sluice_queue_nats_up',
      '1 while NATS is connected and the last JetStream check of the stream answered.',
    ),
    publishDuration: histogram(
      registry,
      'sluice_queue_publish_duration_seconds',
      'From the first publish of a request’s events to the last JetStream ack, by result (ok, stream_full, timeout, error).',
      ['result'],
      [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    ),
    pendingAcks: new Gauge({
      name: 'sluice_queue_publish_pending_acks',
      help: 'Events published and awaiting their JetStream ack (bounded by SLUICE_NATS_MAX_PENDING_ACKS).',
      registers: r,
      collect() {
        for (const hook of collectHooks) hook();
      },
    }),
    publishRequestsPerMessage: histogram(
      registry,
      'sluice_queue_publish_requests_per_message',
      'Requests whose events of one lane one published message carries (requests arriving while earlier messages await their acks share the next one).',
      [],
      [1, 2, 4, 8, 16, 32, 64, 128],
    ),
    publishDuplicates: counter(
      registry,
      'sluice_queue_publish_duplicates_total',
      'Messages JetStream acked as duplicates of one it stored within its duplicate window (a resent request), not stored again.',
    ),
    publishRefused: counter(
      registry,
      'sluice_queue_publish_refused_total',
      'Events not published, by reason (pending_acks: the local bound; stream_full; timeout; unavailable; error).',
      ['reason'],
    ),
    streamMessages: gauge(
      registry,
      'sluice_queue_stream_messages',
      'Messages held by the stream (the backlog the workers have not acked yet), at the last check.',
    ),
    streamBytes: gauge(registry, 'sluice_queue_stream_bytes', 'Bytes held by the stream at the last check.'),
    streamMaxBytes: gauge(
      registry,
      'sluice_queue_stream_max_bytes',
      'Configured size limit of the stream (SLUICE_NATS_MAX_BYTES).',
    ),
    streamOldestAge: gauge(
      registry,
      'sluice_queue_stream_oldest_age_seconds',
      'Age of the oldest message the stream holds (0 when empty), at the last check: past SLUICE_NATS_MAX_AGE the workers expire it (counted), past sluice_queue_stream_max_age_seconds the stream removes it unread (not counted).',
    ),
    streamMaxAge: gauge(
      registry,
      'sluice_queue_stream_max_age_seconds',
      'The stream’s own max age (its max_age): a message older is removed by JetStream unread, uncounted in the loss map.',
    ),
    streamReplicas: gauge(
      registry,
      'sluice_queue_stream_replicas',
      'Copies the stream keeps of each message (its num_replicas; SLUICE_NATS_REPLICAS when Sluice created it), at the last check.',
    ),
    streamReplicasCurrent: gauge(
      registry,
      'sluice_queue_stream_replicas_current',
      'Servers holding an up-to-date copy of the stream, its leader included, at the last check: below sluice_queue_stream_replicas while a server is down or catching up.',
    ),
    streamLeaderChanges: counter(
      registry,
      'sluice_queue_stream_leader_changes_total',
      'Times the stream’s leader was seen to move to another server (an election: publishes wait or fail meanwhile).',
    ),
    consumerPending: gauge(
      registry,
      'sluice_queue_consumer_pending_messages',
      'Consumer lag: messages of the consumer’s subject not yet delivered (num_pending), by consumer.',
      ['consumer'],
    ),
    consumerAckPending: gauge(
      registry,
      'sluice_queue_consumer_ack_pending_messages',
      'Messages delivered to workers and not yet acked (num_ack_pending), by consumer.',
      ['consumer'],
    ),
    workerBatchSize: histogram(
      registry,
      'sluice_queue_worker_batch_size_messages',
      'Messages per batch a worker fetched and settled (each carries one request’s events of one lane).',
      [],
      [1, 10, 50, 100, 250, 500, 1000, 2500, 5000, 10000],
    ),
    workerBatchEvents: histogram(
      registry,
      'sluice_queue_worker_batch_events',
      'Events per batch a worker wrote (SLUICE_WORKER_BATCH_SIZE bounds it).',
      [],
      [1, 10, 100, 250, 500, 1000, 2000, 5000, 10000, 20000],
    ),
    workerBatchDuration: histogram(
      registry,
      'sluice_queue_worker_batch_duration_seconds',
      'From a batch fetched to every message of it acked (or handed back): decode, write, commit, ack.',
      [],
      [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    ),
    messagesAcked: counter(
      registry,
      'sluice_queue_messages_acked_total',
      'Messages acked after their batch committed (or after they went to the dead-letter subject), by consumer.',
      ['consumer'],
    ),
    redeliveries: counter(
      registry,
      'sluice_queue_redeliveries_total',
      'Messages fetched that had been delivered before (a worker died, timed out or handed them back), by consumer.',
      ['consumer'],
    ),
    messagesNaked: counter(
      registry,
      'sluice_queue_messages_naked_total',
      'Messages handed back for a later delivery, by reason (failed: this delivery failed; stopping: the worker is shutting down).',
      ['reason'],
    ),
    eventsExpired: counter(
      registry,
      'sluice_queue_events_expired_total',
      'Events a worker took from the stream older than SLUICE_NATS_MAX_AGE: acked unwritten, counted as lost (expired, max_age) in the loss map.',
    ),
    deadLetters: counter(
      registry,
      'sluice_queue_dead_letters_total',
      'Dead letters published: a whole message (unparseable, max_deliveries) or one event of it (storage_rejected, or an unparseable element), by reason.',
      ['reason'],
    ),
    fetchErrors: counter(
      registry,
      'sluice_queue_fetch_errors_total',
      'Pull requests that failed (NATS away, consumer missing); the worker backs off and tries again.',
    ),
  };
}

export type QueueMetrics = ReturnType<typeof createQueueMetrics>;
