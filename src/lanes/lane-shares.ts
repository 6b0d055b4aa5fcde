import { maxMinLevel } from '../intake/fair-share';

/**
 * How long an app that offered a batch still claims room for its next one (milliseconds): two
 * flushes of the SDK's default interval (5 s), so a quiet app between two flushes keeps its claim.
 */
export const CLAIM_MS = 10_000;
/**
 * Share of the lane held from which apps are held to their fair share of it (a factor of its
 * capacity). Below it every app is taken while the lane has room, and nothing is computed.
 */
export const SHARE_FROM = 0.5;
/**
 * How long a worked-out finite fair level is used before it is worked out again (milliseconds): it
 * moves slowly once the lane is shared out, and working it out sorts every active app's claim.
 */
const LEVEL_EVERY_MS = 10;

/** What the lane remembers of one app. */
interface AppRoom {
  /** Events of the app the lane holds (queued or in flight to storage). */
  held: number;
  /** The size of its last batch offered, taken or not (events): the room its next one claims. */
  lastBatch: number;
  /** When it last offered a batch (clock milliseconds). */
  lastOfferAt: number;
}

/**
 * Per-app fair shares of one lane's room, as flow-queueing schedulers share a link (fq_codel,
 * deficit round robin): while the lane is more than `SHARE_FROM` full, an app that already holds
 * events may add a batch only while what it then holds stays within the max-min fair level of the
 * lane's capacity (`maxMinLevel`) among every active app's claim, its events held plus its last
 * batch. An app sending little claims little and is always taken while the lane has room; an app
 * holding nothing is taken whatever the size of its batch (it cannot starve); the app that sends
 * most is refused what it offers past the level, so it cannot fill the room others need for their
 * next batch. An app is active while it holds events or offered within `CLAIM_MS`.
 */
export class LaneShares {
  private readonly apps = new Map<string, AppRoom>();
  private level = { value: Infinity, at: -Infinity };
  private sweptAt = -Infinity;

  constructor(private readonly capacity: number) {}

  /**
   * Whether each app of `batch` (events per app) may add it to what it holds, with `held` events in
   * the lane in all. Records the offer (a refused batch claims room as well as a taken one).
   */
  allows(batch: ReadonlyMap<string, number>, held: number, now: number): boolean {
    if (now - this.sweptAt >= CLAIM_MS) this.sweep(now);
    let total = 0;
    for (const [app, n] of batch) {
      const room = this.room(app);
      room.lastBatch = n;
      room.lastOfferAt = now;
      total += n;
    }
    if (held + total <= this.capacity * SHARE_FROM) return true;
    const level = this.fairLevel(now);
    for (const [app, n] of batch) {
      const room = this.apps.get(app) as AppRoom;
      if (room.held > 0 && room.held + n > level) return false;
    }
    return true;
  }

  /** `events` of `app` now held by the lane. */
  admitted(app: string, events: number): void {
    this.room(app).held += events;
  }

  /** `events` of `app` no longer held (stored, or given up on). */
  released(app: string, events: number): void {
    const room = this.apps.get(app);
    if (room !== undefined) room.held -= events;
  }

  /** Events of `app` the lane holds. */
  heldBy(app: string): number {
    return this.apps.get(app)?.held ?? 0;
  }

  private room(app: string): AppRoom {
    let room = this.apps.get(app);
    if (room === undefined) {
      room = { held: 0, lastBatch: 0, lastOfferAt: -Infinity };
      this.apps.set(app, room);
    }
    return room;
  }

  /**
   * The fair level of the lane among the active apps' claims. Infinity (every claim fits) is never
   * kept: the next batch may be the one that makes the claims exceed the lane.
   */
  private fairLevel(now: number): number {
    if (now - this.level.at < LEVEL_EVERY_MS && now >= this.level.at) return this.level.value;
    const claims: number[] = [];
    let claimed = 0;
    for (const room of this.apps.values()) {
      const claim = room.held + room.lastBatch;
      claims.push(claim);
      claimed += claim;
    }
    if (claimed <= this.capacity) return Infinity;
    this.level = { value: maxMinLevel(this.capacity, claims), at: now };
    return this.level.value;
  }

  /** Forgets the apps that hold nothing and last offered `CLAIM_MS` ago or more. */
  private sweep(now: number): void {
    this.sweptAt = now;
    for (const [app, room] of this.apps)
      if (room.held <= 0 && now - room.lastOfferAt >= CLAIM_MS) this.apps.delete(app);
  }
}
