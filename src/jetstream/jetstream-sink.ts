import type { TelemetryEvent } from '../events/types';
import type { EventSink, LaneName, SinkAnswer, SinkItem } from '../intake/event-sink';
import type { OutcomeOrigin } from '../loss-map/outcome';
import type { QueueMetrics } from '../metrics/queue-instruments';
import {
  PENDING_ACKS_RETRY_AFTER_S,
  UNAVAILABLE_RETRY_AFTER_S,
  retryAfterToDrain,
} from '../intake/retry-after';
import type { AsyncPublisher, PublishResult } from './async-publisher';
import { CoalescingPublisher } from './coalescing-publisher';
import { compactElement, encodedEvents, type EncodedEvent } from './event-batches';
import type { QueueTopology } from './topology';

export interface JetStreamSinkOptions {
  /** Null until the link to JetStream is up (the collector listens before): offers answer unavailable. */
  readonly publisher: () => Pick<AsyncPublisher, 'publishAll'> | null;
  readonly topology: QueueTopology;
  /** Most events awaiting their publish ack at once in this process; past it, `offer` answers queue_full. */
  readonly maxPendingAcks: number;
  /** Largest message payload the server takes (bytes, its `max_payload`): a request's events are split below it. */
  readonly maxPayloadBytes: () => number;
  /** Longest wait for the acks of one offer (milliseconds); then it answers unavailable. */
  readonly publishTimeoutMs: number;
  /** Whether the background check last reached JetStream (`JetStreamMonitor.up`). */
  readonly up: () => boolean;
  /**
   * Told when a publish got no ack, or no stream answered it, while the stream seemed usable
   * (`JetStreamMonitor.checkNow`): e.g. its leader just died, and the next requests should get
   * their 503 from memory rather than each after the publish timeout.
   */
  readonly onUnavailable: () => void;
  /** Messages the workers remove from the stream per second (`JetStreamMonitor.drainRate`). */
  readonly drainPerSecond: () => number;
  readonly metrics: QueueMetrics;
}

/**
 * Messages of one lane awaiting their acks at once, per collector: one with whatever waited, more
 * only when full ones wait (see `CoalescingPublisher`), so that a lane is never capped at one
 * message per ack round trip.
 */
const MESSAGES_IN_FLIGHT_PER_LANE = 4;
/**
 * Payload at which a shared message takes no further request (bytes): JetStream's CPU per event
 * falls with the message's size, most of all on a replicated stream (docs/CAPACITY.md). A request
 * larger than this still goes in one message, up to the server's `max_payload`.
 */
const MESSAGE_TARGET_BYTES = 256 * 1024;

/**
 * What this sink holds of an event the single pass wrote (`SinkItem.row`): its format-2 array
 * (compact-payload.ts) as the bytes of a message element, made by `compactFromScan`.
 */
export type MessageElement = Uint8Array;

/** An item as a message element: what the single pass wrote, or the typed event encoded now. */
function encodedEvent(item: SinkItem<MessageElement>): EncodedEvent {
  const element = item.row ?? compactElement(item.event as TelemetryEvent);
  return { id: item.id, ts: item.ts, element };
}

/** JetStream's "maximum bytes/messages exceeded" (a discard-new stream at its limit). */
const STREAM_STORE_FAILED = 10077;

type Failure = 'stream_full' | 'timeout' | 'unavailable' | 'error';

function failureOf(o: PublishResult): Failure | null {
  switch (o.kind) {
    case 'stored':
      return null;
    case 'refused':
      return o.errCode === STREAM_STORE_FAILED || /maximum (bytes|messages)/i.test(o.description)
        ? 'stream_full'
        : 'error';
    case 'no_stream':
      return 'unavailable';
    case 'timeout':
      return 'timeout';
    case 'error':
      return 'error';
  }
}

/**
 * The tier-4 sink: a request's events of one lane go to the lane's subject through its
 * `CoalescingPublisher` (alone when the lane is idle; with the other requests that arrived while
 * earlier messages awaited their acks, under load), in messages whose `Nats-Msg-Id` digests the
 * events' `(id, ts)` (JetStream drops a repeat inside the duplicate window; the database's dedupe
 * stores each event once in any case), and the answer is `taken` only after the ack of every
 * message holding its events: a 202 then means "persisted by JetStream", on a replicated stream
 * by a majority of its servers (JetStream's leader acks once its RAFT group committed the
 * message; see docs/cluster.md, "What 202 means", for what that means on power loss).
 *
 * Never waits for room: past `maxPendingAcks` events in flight, a full stream, or JetStream
 * unreachable, it answers at once; a publish that gets no ack is bounded by `publishTimeoutMs`.
 * Events of a refused offer may still have been stored (some acks arrived): the client resends
 * them, and JetStream and storage (`writeRows`) both dedupe, so all-or-nothing holds for what is stored.
 */
export class JetStreamSink implements EventSink<MessageElement> {
  private pending = 0;
  private idleWaiters: Array<() => void> = [];
  /** A publisher per lane and origin: a message holds requests of one origin (`ORIGIN_HEADER`). */
  private readonly publishers = new Map<string, CoalescingPublisher>();

  constructor(private readonly o: JetStreamSinkOptions) {
    o.metrics.onCollect(() => o.metrics.pendingAcks.set(this.pending));
  }

  /** Events published and not yet acked. */
  get pendingAcks(): number {
    return this.pending;
  }

  admitting(): boolean {
    return this.o.up();
  }

  async offer(
    lane: LaneName,
    items: readonly SinkItem<MessageElement>[],
    _now: number,
    origin: OutcomeOrigin,
  ): Promise<SinkAnswer> {
    const { o } = this;
    const n = items.length;
    const publisher = o.publisher();
    if (!o.up() || publisher === null) {
      o.metrics.publishRefused.inc({ reason: 'unavailable' }, n);
      return { admitted: false, reason: 'unavailable', retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_S };
    }
    if (this.pending + n > o.maxPendingAcks) {
      o.metrics.publishRefused.inc({ reason: 'pending_acks' }, n);
      return { admitted: false, reason: 'queue_full', retryAfterSeconds: PENDING_ACKS_RETRY_AFTER_S };
    }
    const key = `${lane}/${origin}`;
    let coalescer = this.publishers.get(key);
    if (coalescer === undefined) {
      coalescer = this.coalescer(lane, origin, publisher);
      this.publishers.set(key, coalescer);
    }
    const started = process.hrtime.bigint();
    this.pending += n;
    let outcomes: PublishResult[];
    try {
      outcomes = await coalescer.publish(encodedEvents(items.map(encodedEvent)));
    } finally {
      this.pending -= n;
      if (this.pending === 0) for (const w of this.idleWaiters.splice(0)) w();
    }
    let failure: Failure | null = null;
    let messagesFailed = 0;
    for (const outcome of outcomes) {
      const kind = failureOf(outcome);
      if (kind === null) continue;
      messagesFailed++;
      // A full stream wins: the client should slow down, not fail over.
      if (failure === null || kind === 'stream_full') failure = kind;
    }
    o.metrics.publishDuration.observe(
      { result: failure ?? 'ok' },
      Number(process.hrtime.bigint() - started) / 1e9,
    );
    if (failure === null) return { admitted: true };
    // Not taken: the client resends every event of the request.
    o.metrics.publishRefused.inc({ reason: failure }, n);
    if (failure === 'stream_full') {
      return {
        admitted: false,
        reason: 'queue_full',
        retryAfterSeconds: this.fullRetryAfter(messagesFailed),
      };
    }
    o.onUnavailable();
    return { admitted: false, reason: 'unavailable', retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_S };
  }

  /** Resolves once no publish awaits its ack (shutdown: after the listener closed). */
  drained(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private coalescer(
    lane: LaneName,
    origin: OutcomeOrigin,
    publisher: Pick<AsyncPublisher, 'publishAll'>,
  ): CoalescingPublisher {
    const { o } = this;
    return new CoalescingPublisher({
      lane,
      origin,
      subject: o.topology.subjects[lane],
      publisher,
      maxPayloadBytes: o.maxPayloadBytes,
      publishTimeoutMs: o.publishTimeoutMs,
      maxInFlight: MESSAGES_IN_FLIGHT_PER_LANE,
      targetBytes: MESSAGE_TARGET_BYTES,
      metrics: o.metrics,
    });
  }

  /** Seconds until the workers have removed `needed` messages at their recent rate: [1, 30]. */
  private fullRetryAfter(needed: number): number {
    return retryAfterToDrain(needed, this.o.drainPerSecond());
  }
}
