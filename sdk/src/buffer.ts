import { Deque } from './deque';
import { EVENT_TYPES, type EventType, type WireEvent } from './types';

/** One buffered event with what the buffer needs to bound and order it. */
export interface BufferEntry {
  readonly event: WireEvent;
  /** Estimated JSON size (characters), counted against `maxBytes`. */
  readonly bytes: number;
  /**
   * Capture order. Non-decreasing within a priority (requeued entries go
   * back to the front, where they came from), so `minSeq` is the minimum
   * of the queue heads; `flush()` waits until it passes its own mark.
   */
  readonly seq: number;
}

export interface BufferLimits {
  /** Most events held. */
  readonly maxEvents: number;
  /** Most estimated bytes held. */
  readonly maxBytes: number;
}

/** Index of each type in `EVENT_TYPES`: its priority, 0 lowest. */
const PRIORITY: Readonly<Record<EventType, number>> = { metric: 0, log: 1, lifecycle: 2, error: 3 };

/**
 * The offline buffer: bounded by count and bytes; when over a bound it drops
 * the lowest priority first (metric < log < lifecycle < error), oldest first
 * within a priority (docs/ARCHITECTURE.md: priority drop). Batches are taken highest
 * priority first, so errors leave first, as they are drained first by the
 * collector's fast lane.
 */
export class PriorityBuffer {
  private readonly queues: Deque<BufferEntry>[] = EVENT_TYPES.map(() => new Deque<BufferEntry>());
  private count = 0;
  private totalBytes = 0;

  /** @param onDrop receives each entry evicted to stay within the limits */
  constructor(
    private readonly limits: BufferLimits,
    private readonly onDrop: (entry: BufferEntry) => void,
  ) {}

  get size(): number {
    return this.count;
  }

  get bytes(): number {
    return this.totalBytes;
  }

  /** Adds a new entry at the back of its priority, then evicts to the limits. */
  push(entry: BufferEntry): void {
    this.queueOf(entry).pushBack(entry);
    this.added(entry);
    this.evict();
  }

  /**
   * Puts entries back at the front of their priorities, in their order (a
   * retry: they are older than anything queued since), then evicts.
   */
  requeue(entries: readonly BufferEntry[]): void {
    for (let i = entries.length - 1; i >= 0; i--) {
      const entry = entries[i]!;
      this.queueOf(entry).pushFront(entry);
      this.added(entry);
    }
    this.evict();
  }

  /**
   * Removes and returns up to `maxEvents` entries, highest priority first,
   * oldest first within one, stopping before `maxBytes` is passed (the first
   * entry is always taken).
   */
  take(maxEvents: number, maxBytes: number): BufferEntry[] {
    const out: BufferEntry[] = [];
    let bytes = 0;
    for (let p = this.queues.length - 1; p >= 0; p--) {
      const q = this.queues[p]!;
      for (let head = q.peekFront(); head !== undefined; head = q.peekFront()) {
        if (out.length >= maxEvents || (out.length > 0 && bytes + head.bytes > maxBytes)) return out;
        q.popFront();
        this.removed(head);
        bytes += head.bytes;
        out.push(head);
      }
    }
    return out;
  }

  /** Smallest `seq` held, or `Infinity` when empty. */
  minSeq(): number {
    let min = Infinity;
    for (const q of this.queues) {
      const head = q.peekFront();
      if (head !== undefined && head.seq < min) min = head.seq;
    }
    return min;
  }

  /** Buffered events per type. */
  countsByType(): Record<EventType, number> {
    return {
      metric: this.queues[0]!.size,
      log: this.queues[1]!.size,
      lifecycle: this.queues[2]!.size,
      error: this.queues[3]!.size,
    };
  }

  /** Every buffered event, highest priority first (what persistence saves). */
  events(): WireEvent[] {
    const out: WireEvent[] = [];
    for (let p = this.queues.length - 1; p >= 0; p--)
      for (const e of this.queues[p]!.toArray()) out.push(e.event);
    return out;
  }

  private queueOf(entry: BufferEntry): Deque<BufferEntry> {
    return this.queues[PRIORITY[entry.event.type]]!;
  }

  private added(entry: BufferEntry): void {
    this.count++;
    this.totalBytes += entry.bytes;
  }

  private removed(entry: BufferEntry): void {
    this.count--;
    this.totalBytes -= entry.bytes;
  }

  private evict(): void {
    while (this.count > this.limits.maxEvents || this.totalBytes > this.limits.maxBytes) {
      const q = this.queues.find((queue) => queue.size > 0);
      const victim = q?.popFront();
      if (victim === undefined) return;
      this.removed(victim);
      this.onDrop(victim);
    }
  }
}
