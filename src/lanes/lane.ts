import type { LaneName } from '../intake/event-sink';
import type { StorageRow } from '../storage/port';
import type { CommitTicket } from './commit-ticket';
import type { OutcomeOrigin } from '../loss-map/outcome';
import { countByApp } from '../events/count-by-app';
import { LaneShares } from './lane-shares';

/** One admitted event, held until storage has committed it. */
export interface LaneItem {
  /** The event as storage will write it (`Storage.toRow`). */
  readonly row: StorageRow;
  /** The event's id, for the log line of an event storage refuses. */
  readonly id: string;
  readonly lane: LaneName;
  /** Estimated in-memory size (bytes). */
  readonly bytes: number;
  readonly ticket: CommitTicket | null;
  /** When it was admitted (clock milliseconds): drives the flush interval. */
  readonly admittedAt: number;
  /** The event's app, `ts` and type: the loss map counts an event refused or dropped here by them. */
  readonly app: string;
  readonly ts: number;
  readonly type: string;
  /** The loss map's origin of the request that brought it: a duplicate of it is counted with it. */
  readonly origin: OutcomeOrigin;
}

/** Capacity of one lane. */
export interface LaneLimits {
  /** Most events held (queued plus in flight to storage). */
  readonly maxEvents: number;
  /** Most estimated bytes held. */
  readonly maxBytes: number;
}

/**
 * A bounded FIFO of admitted events. Invariant: `heldEvents ≤ maxEvents` and
 * `heldBytes ≤ maxBytes`, where "held" counts events until storage has
 * committed them — a batch in flight still occupies its room, so memory stays
 * bounded even while writes fail and are retried.
 */
export class BoundedLane {
  private items: LaneItem[] = [];
  private head = 0;
  private events = 0;
  private bytesHeld = 0;
  private readonly shares: LaneShares;

  constructor(
    readonly name: LaneName,
    readonly limits: LaneLimits,
  ) {
    this.shares = new LaneShares(limits.maxEvents);
  }

  /** Events held: queued plus taken but not yet released. */
  get heldEvents(): number {
    return this.events;
  }

  get heldBytes(): number {
    return this.bytesHeld;
  }

  /** Events waiting to be taken by the writer. */
  get queued(): number {
    return this.items.length - this.head;
  }

  /** Admission time of the oldest queued event, or null when none is queued. */
  get oldestAdmittedAt(): number | null {
    return this.items[this.head]?.admittedAt ?? null;
  }

  /** Whether `events` more events of `bytes` in all fit now. */
  hasRoom(events: number, bytes: number): boolean {
    return this.events + events <= this.limits.maxEvents && this.bytesHeld + bytes <= this.limits.maxBytes;
  }

  /**
   * Whether each app of a batch (`events` per app) is within its fair share of the lane's room
   * (lane-shares.ts) once it is added. Records the offer: call it once per batch offered.
   */
  withinShares(events: ReadonlyMap<string, number>, now: number): boolean {
    return this.shares.allows(events, this.events, now);
  }

  /** Events of `app` held: queued plus taken but not yet released. */
  heldBy(app: string): number {
    return this.shares.heldBy(app);
  }

  /** Admits all of `batch` or none of it; never waits. */
  tryAdmit(batch: readonly LaneItem[], batchBytes: number): boolean {
    if (!this.hasRoom(batch.length, batchBytes)) return false;
    this.admit(batch, batchBytes);
    return true;
  }

  /**
   * Admits `batch`, which the caller found room for with `hasRoom` (nothing runs between the two).
   * `byApp`: its events per app, when the caller counted them already (`countByApp`).
   */
  admit(
    batch: readonly LaneItem[],
    batchBytes: number,
    byApp: ReadonlyMap<string, number> = countByApp(batch),
  ): void {
    for (const item of batch) this.items.push(item);
    for (const [app, n] of byApp) this.shares.admitted(app, n);
    this.events += batch.length;
    this.bytesHeld += batchBytes;
  }

  /** Removes up to `max` of the oldest queued events; they stay held until `release`. */
  shift(max: number): LaneItem[] {
    const end = Math.min(this.items.length, this.head + max);
    const out = this.items.slice(this.head, end);
    this.head = end;
    if (this.head > 4096 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return out;
  }

  /** Frees the room of events that storage has committed (or that were given up on). */
  release(items: readonly LaneItem[]): void {
    let bytes = 0;
    for (const item of items) bytes += item.bytes;
    for (const [app, n] of countByApp(items)) this.shares.released(app, n);
    this.events -= items.length;
    this.bytesHeld -= bytes;
  }
}
