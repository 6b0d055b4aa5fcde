import type { Counter } from 'prom-client';
import type { BatchWriterLoop } from './batch-writer-loop';
import { CommitTicket } from './commit-ticket';
import { retryAfterToDrain } from '../intake/retry-after';
import type { TelemetryEvent } from '../events/types';
import { countByApp } from '../events/count-by-app';
import type { BoundedLane } from './lane';
import type { StorageRow } from '../storage/port';
import type { OutcomeOrigin } from '../loss-map/outcome';
import type { EventSink, LaneName, SinkAnswer, SinkItem } from '../intake/event-sink';

export interface LaneSinkOptions {
  readonly errorLane: BoundedLane;
  readonly standardLane: BoundedLane;
  readonly writer: Pick<BatchWriterLoop, 'notify' | 'drainRate'>;
  /** `queued`: taken once in a lane. `stored`: durable once committed (group commit). */
  readonly ack: 'queued' | 'stored';
  /** With `ack: 'stored'`, longest wait for the commit (milliseconds). */
  readonly ackTimeoutMs: number;
  /** Whether the background check last reached storage. */
  readonly storageUp: () => boolean;
  /** Encodes an admitted event for storage (`Storage.toRow`): lanes hold rows, not events. */
  readonly toRow: (event: TelemetryEvent) => StorageRow;
  /** `sluice_lane_share_refusals_total`: a batch refused for its app's fair share (lane-shares.ts). */
  readonly shareRefusals?: Counter<'lane'>;
}

/** The in-process sink: bounded lanes drained by the single writer loop. */
export class LaneSink implements EventSink {
  constructor(private readonly o: LaneSinkOptions) {}

  admitting(): boolean {
    return this.o.ack === 'queued' || this.o.storageUp();
  }

  cannotAdmit(lane: LaneName, events: number): { retryAfterSeconds: number } | null {
    const target = lane === 'error' ? this.o.errorLane : this.o.standardLane;
    const { maxEvents, maxBytes } = target.limits;
    if (target.heldEvents + events <= maxEvents && target.heldBytes < maxBytes) return null;
    const rate = this.o.writer.drainRate.perSecond();
    return { retryAfterSeconds: retryAfterToDrain(target.heldEvents + events - maxEvents, rate) };
  }

  async offer(
    lane: LaneName,
    items: readonly SinkItem[],
    now: number,
    origin: OutcomeOrigin,
  ): Promise<SinkAnswer> {
    const target = lane === 'error' ? this.o.errorLane : this.o.standardLane;
    const ticket = this.o.ack === 'stored' ? new CommitTicket() : null;
    let bytes = 0;
    for (const i of items) bytes += i.bytes;
    const byApp = countByApp(items);
    const withinShares = target.withinShares(byApp, now);
    if (!withinShares) this.o.shareRefusals?.inc({ lane });
    if (!withinShares || !target.hasRoom(items.length, bytes)) {
      const wait = retryAfterToDrain(
        target.heldEvents + items.length - target.limits.maxEvents,
        this.o.writer.drainRate.perSecond(),
      );
      return { admitted: false, reason: 'queue_full', retryAfterSeconds: wait };
    }
    // Encoded only once admission is certain: a refused request costs no encoding.
    const { toRow } = this.o;
    target.admit(
      items.map((i) => ({
        row: i.row ?? toRow(i.event as TelemetryEvent),
        id: i.id,
        lane,
        bytes: i.bytes,
        ticket,
        admittedAt: now,
        app: i.app,
        ts: i.ts,
        type: i.type,
        origin,
      })),
      bytes,
      byApp,
    );
    this.o.writer.notify();
    if (ticket === null) return { admitted: true };
    ticket.arm(items.length);
    return { admitted: true, durable: this.committedInTime(ticket), settled: ticket.committed };
  }

  private committedInTime(ticket: CommitTicket): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), this.o.ackTimeoutMs);
      void ticket.committed.then(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}
