import { accepting, bytes, duration, integer, oneOf } from './parsers';
import { setting } from './setting';

/** A comma-separated list of `nats://` (or `tls://`) server URLs. */
function natsUrls() {
  return accepting('nats:// or tls:// URLs, comma-separated', (raw: string): readonly string[] => {
    const list = raw
      .split(',')
      .map((u) => u.trim())
      .filter(Boolean);
    if (list.length === 0) throw new Error('must list at least one URL such as nats://127.0.0.1:4222');
    for (const u of list) {
      let url: URL;
      try {
        url = new URL(u);
      } catch {
        throw new Error(
          `must be a comma-separated list of URLs such as nats://127.0.0.1:4222 (bad entry "${u}")`,
        );
      }
      if (url.protocol !== 'nats:' && url.protocol !== 'tls:') {
        throw new Error(`entries must start with nats:// or tls:// (bad entry "${u}")`);
      }
    }
    return list;
  });
}

/** A JetStream stream name: letters, digits, `_` and `-` (no `.`, `*`, `>` or spaces). */
function streamName() {
  return accepting('1–64 of A–Z a–z 0–9 _ -', (raw: string): string => {
    const v = raw.trim();
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(v)) {
      throw new Error('must be 1–64 characters of letters, digits, "_" or "-"');
    }
    return v;
  });
}

/** Dot-separated subject tokens without wildcards, e.g. `sluice.events`. */
function subjectPrefix() {
  return accepting('dot-separated tokens', (raw: string): string => {
    const v = raw.trim();
    if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(v) || v.length > 128) {
      throw new Error(
        'must be dot-separated tokens of letters, digits, "_" or "-" (no wildcards), e.g. sluice.events',
      );
    }
    return v;
  });
}

/**
 * Copies JetStream keeps of each message: 1, 3 or 5. RAFT needs a majority, so 2 copies survive
 * no more failures than 1 and 4 no more than 3; JetStream allows at most 5.
 */
function replicaCount() {
  return accepting('1, 3, 5', (raw: string): 1 | 3 | 5 => {
    const v = raw.trim();
    if (v !== '1' && v !== '3' && v !== '5') {
      throw new Error(
        'must be 1, 3 or 5 (a replicated stream needs a majority of its copies: 3 survive the loss of 1 server, 5 of 2; 2 or 4 survive no more than 1 or 3)',
      );
    }
    return Number(v) as 1 | 3 | 5;
  });
}

const MiB = 1024 * 1024;

/**
 * Settings of tier 4 (queue mode): the JetStream stream the collectors publish to and the
 * `sluice worker` that drains it into PostgreSQL. The stream holds two subjects,
 * `<prefix>.error` and `<prefix>.standard`, each with its own durable pull consumer (errors are
 * drained first); messages that keep failing move to `<prefix>.dead` in the stream `<stream>_DEAD`.
 * The stream and consumers are created, or updated to these values, when a collector or worker starts
 * (except an existing stream's replicas, which only its operator changes).
 */
export const QUEUE_SETTINGS = {
  mode: setting({
    env: 'SLUICE_MODE',
    default: 'direct',
    doc: 'direct: this collector writes to storage. ingest: it publishes to JetStream (SLUICE_NATS_URL) and `sluice worker` writes (tier 4).',
    parse: oneOf(['direct', 'ingest'] as const),
  }),
  natsUrl: setting({
    env: 'SLUICE_NATS_URL',
    doc: 'NATS server(s) with JetStream, comma-separated (nats://host:4222); list every server of a cluster: the client moves to another when its server fails. Required with SLUICE_MODE=ingest and by `sluice worker`.',
    parse: natsUrls(),
  }),
  natsStream: setting({
    env: 'SLUICE_NATS_STREAM',
    default: 'SLUICE_EVENTS',
    doc: 'JetStream stream name (work-queue retention, file storage); consumers are <stream>_error and <stream>_standard.',
    parse: streamName(),
  }),
  natsSubjectPrefix: setting({
    env: 'SLUICE_NATS_SUBJECT_PREFIX',
    default: 'sluice.events',
    doc: 'Subjects of the stream: <prefix>.error, <prefix>.standard; dead letters go to <prefix>.dead.',
    parse: subjectPrefix(),
  }),
  natsReplicas: setting({
    env: 'SLUICE_NATS_REPLICAS',
    default: '1',
    doc: 'Copies of each message (1, 3 or 5) when the stream and its dead-letter stream are created; consumers follow their stream. 3 or 5 need a JetStream cluster of at least that many servers: a 202 then means a majority of them stored the events. An existing stream keeps its replicas: a difference is reported at start, not changed.',
    parse: replicaCount(),
  }),
  natsMaxBytes: setting({
    env: 'SLUICE_NATS_MAX_BYTES',
    default: '1GiB',
    doc: 'Stream size limit; when full new events are refused (discard new) and collectors answer 429.',
    parse: bytes(1024, 1024 * 1024 * MiB),
  }),
  natsMaxAgeMs: setting({
    env: 'SLUICE_NATS_MAX_AGE',
    default: '24h',
    doc: 'Oldest an event may wait in the stream: a worker that takes an older one acks it unwritten and counts it lost (expired) in the loss map; the stream itself keeps messages twice as long (at least an hour more), then removes them unread and uncounted. Keep it above any worker outage.',
    parse: duration(1000, 365 * 86_400_000, 'h'),
  }),
  natsDuplicateWindowMs: setting({
    env: 'SLUICE_NATS_DUPLICATE_WINDOW',
    default: '2m',
    doc: 'JetStream drops a message whose id (a digest of its events’ id and ts) it saw within this window (a request resent alone costs nothing); past it, or in a message shared with other requests, the database’s (id, ts) dedupe stores each event once.',
    parse: duration(100, 86_400_000, 's'),
  }),
  natsDeadLetterMaxAgeMs: setting({
    env: 'SLUICE_NATS_DEAD_LETTER_MAX_AGE',
    default: '7d',
    doc: 'How long dead letters are kept in <stream>_DEAD for inspection.',
    parse: duration(1000, 365 * 86_400_000, 'd'),
  }),
  natsMaxPendingAcks: setting({
    env: 'SLUICE_NATS_MAX_PENDING_ACKS',
    default: '8192',
    doc: 'Most events one collector has awaiting their JetStream publish ack; a request that would exceed it gets 429 at once.',
    parse: integer(1, 1_000_000),
  }),
  natsPublishTimeoutMs: setting({
    env: 'SLUICE_NATS_PUBLISH_TIMEOUT_MS',
    default: '2000',
    doc: 'Longest a request waits for the acks of its publishes before 503; also bounds JetStream API calls.',
    parse: duration(50, 60_000, 'ms'),
  }),
  workerBatchSize: setting({
    env: 'SLUICE_WORKER_BATCH_SIZE',
    default: '2000',
    doc: 'sluice worker: events per transaction; messages (each one or more requests’ events of one lane) are pulled until their events reach it.',
    parse: integer(1, 10_000),
  }),
  workerFetchExpiresMs: setting({
    env: 'SLUICE_WORKER_FETCH_EXPIRES_MS',
    default: '1000',
    doc: 'sluice worker: how long an idle worker waits for a message per pull request (bounds the latency of a quiet stream).',
    parse: duration(1000, 60_000, 'ms'),
  }),
  workerAckWaitMs: setting({
    env: 'SLUICE_WORKER_ACK_WAIT',
    default: '30s',
    doc: 'Consumer ack wait: a message not acked this long after delivery (worker died) is delivered again.',
    parse: duration(1000, 3_600_000, 's'),
  }),
  workerMaxAckPending: setting({
    env: 'SLUICE_WORKER_MAX_ACK_PENDING',
    default: '20000',
    doc: 'Consumer max_ack_pending: most messages delivered and not yet acked, over all workers (each of a worker’s SLUICE_WRITE_CONCURRENCY loops holds a batch and prefetches the next, at most SLUICE_WORKER_BATCH_SIZE messages each).',
    parse: integer(1, 1_000_000),
  }),
  workerMaxDeliveries: setting({
    env: 'SLUICE_WORKER_MAX_DELIVERIES',
    default: '5',
    doc: 'A message that fails this many deliveries (unparseable, refused by the database, or its worker died each time) goes to the dead-letter subject.',
    parse: integer(1, 1000),
  }),
  workerPort: setting({
    env: 'SLUICE_WORKER_PORT',
    default: '8081',
    doc: 'sluice worker: HTTP port of /livez, /readyz and /metrics (0 picks a free one).',
    parse: integer(0, 65535),
  }),
} as const;
