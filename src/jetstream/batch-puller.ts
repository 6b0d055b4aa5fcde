import type { NatsConnection } from '@nats-io/nats-core';
import type { LaneName } from '../intake/event-sink';
import { EVENT_COUNT_HEADER } from './event-batches';
import { fetchOne, fetchWaiting } from './pull';
import type { PulledMessage } from './pulled-message';
import type { QueueTopology } from './topology';

/** The consumers in the order a batch is filled: errors first. */
export const LANES = ['error', 'standard'] as const;

/** A pulled message, with its lane and the events its payload declares. */
export interface Fetched {
  readonly msg: PulledMessage;
  readonly lane: LaneName;
  /** Events its payload holds (its `Sluice-Events` header; 1 without it). */
  readonly events: number;
}

export interface BatchPullerOptions {
  readonly nc: Pick<NatsConnection, 'publish' | 'subscribe'>;
  readonly topology: QueueTopology;
  /** Events per batch: messages are pulled until their events reach it. */
  readonly batchSize: number;
  /** Idle long poll per consumer (milliseconds). */
  readonly fetchExpiresMs: number;
  /** Bound of a `no_wait` pull (milliseconds). */
  readonly requestTimeoutMs: number;
}

/**
 * Pulls the worker's batches: what waits now, errors first, as many messages per pull as the
 * batch has room for at the lane's recent events per message; when nothing waits, one long poll
 * of both consumers.
 */
export class BatchPuller {
  /** Recent events per message of each lane (a moving average); null until one was seen. */
  private readonly eventsPerMessage: Record<LaneName, number | null> = { error: null, standard: null };

  constructor(private readonly o: BatchPullerOptions) {}

  /** `carried` plus what waits now: errors first, then standard, until the events fill a batch. */
  async topUp(carried: readonly Fetched[]): Promise<Fetched[]> {
    const { nc, topology, batchSize, requestTimeoutMs } = this.o;
    const batch = [...carried];
    let events = 0;
    for (const f of batch) events += f.events;
    for (const lane of LANES) {
      // As many messages as the room holds at this lane's recent size (one while it is unknown),
      // again while the lane had all that was asked and room is left.
      for (let room = batchSize - events; room > 0; room = batchSize - events) {
        const perMessage = this.eventsPerMessage[lane];
        const want =
          perMessage === null ? 1 : Math.max(1, Math.min(batchSize, Math.floor(room / perMessage)));
        const msgs = await fetchWaiting(
          nc,
          topology.stream,
          topology.consumers[lane],
          want,
          requestTimeoutMs,
        );
        for (const msg of msgs) {
          const f = this.fetched(msg, lane);
          batch.push(f);
          events += f.events;
        }
        if (msgs.length < want) break;
      }
      if (events >= batchSize) break;
    }
    return batch;
  }

  /** Nothing waiting: long-poll both consumers for one message each (bounded by the fetch expiry). */
  async idlePoll(): Promise<Fetched[]> {
    const { nc, topology, fetchExpiresMs } = this.o;
    const results = await Promise.all(
      LANES.map((lane) => fetchOne(nc, topology.stream, topology.consumers[lane], fetchExpiresMs)),
    );
    return results.flatMap((msgs, i) => msgs.map((msg) => this.fetched(msg, LANES[i] as LaneName)));
  }

  private fetched(msg: PulledMessage, lane: LaneName): Fetched {
    const declared = Number(msg.header(EVENT_COUNT_HEADER));
    const events = Number.isSafeInteger(declared) && declared > 0 ? declared : 1;
    const seen = this.eventsPerMessage[lane];
    this.eventsPerMessage[lane] = seen === null ? events : seen * 0.8 + events * 0.2;
    return { msg, lane, events };
  }
}
