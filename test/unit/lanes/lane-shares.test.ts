import { BoundedLane, type LaneItem } from '../../../src/lanes/lane';
import { CLAIM_MS, LaneShares } from '../../../src/lanes/lane-shares';
import type { StorageRow } from '../../../src/storage/port';

const items = (app: string, n: number): LaneItem[] =>
  Array.from({ length: n }, () => ({
    row: 'x' as unknown as StorageRow,
    id: 'x',
    lane: 'standard',
    bytes: 1,
    ticket: null,
    admittedAt: 0,
    app,
    ts: 0,
    type: 'log',
    origin: 'direct',
  }));

/** Offers `n` events of `app` as the lane sink does: shares first, then room. */
function offer(lane: BoundedLane, app: string, n: number, now: number): boolean {
  if (!lane.withinShares(new Map([[app, n]]), now) || !lane.hasRoom(n, n)) return false;
  lane.admit(items(app, n), n);
  return true;
}

describe('LaneShares', () => {
  it('lets one app fill the lane while no other app claims room', () => {
    const lane = new BoundedLane('standard', { maxEvents: 1000, maxBytes: 1e9 });
    for (let i = 0; i < 10; i++) expect(offer(lane, 'loud', 100, 0)).toBe(true);
    expect(offer(lane, 'loud', 100, 0)).toBe(false);
    expect(lane.heldEvents).toBe(1000);
  });

  it("keeps room for a quiet app's next batch: the app holding most is refused past its share", () => {
    const lane = new BoundedLane('standard', { maxEvents: 1000, maxBytes: 1e9 });
    expect(offer(lane, 'quiet', 50, 0)).toBe(true);
    lane.release(lane.shift(50));
    let loud = 0;
    for (let i = 0; i < 100 && offer(lane, 'loud', 100, 1); i++) loud += 100;
    // The loud app stops short of the lane's end: the quiet app's claim (its last batch) stays free.
    expect(loud).toBeLessThanOrEqual(1000 - 50);
    expect(lane.heldBy('loud')).toBe(loud);
    expect(offer(lane, 'quiet', 50, 2)).toBe(true);
    expect(offer(lane, 'loud', 100, 3)).toBe(false);
  });

  it('never refuses an app that holds nothing while the lane has room (no starvation of a large batch)', () => {
    const lane = new BoundedLane('standard', { maxEvents: 1000, maxBytes: 1e9 });
    for (let i = 0; i < 6; i++) expect(offer(lane, 'a', 100, 0)).toBe(true);
    expect(offer(lane, 'b', 300, 0)).toBe(true);
    // a holds 600 and claims 700, b holds 300 and claims 600: the level is 500, a is over it.
    expect(offer(lane, 'a', 100, 20)).toBe(false);
    // b's next batch of 100 claims 400: within the level (600 then).
    expect(offer(lane, 'b', 100, 40)).toBe(true);
  });

  it('forgets an app that holds nothing and offered nothing for CLAIM_MS', () => {
    const shares = new LaneShares(100);
    expect(shares.allows(new Map([['quiet', 40]]), 0, 0)).toBe(true);
    shares.admitted('loud', 60);
    // The quiet app's claim of 40 leaves the loud app 60.
    expect(shares.allows(new Map([['loud', 10]]), 60, 1)).toBe(false);
    expect(shares.allows(new Map([['loud', 10]]), 60, CLAIM_MS + 100)).toBe(true);
  });
});
