import { BoundedLane, type LaneItem } from '../../../src/lanes/lane';
import type { StorageRow } from '../../../src/storage/port';
import { DrainRate } from '../../../src/writer/drain-rate';

const item = (bytes = 100): LaneItem => ({
  row: 'x' as unknown as StorageRow,
  id: 'x',
  lane: 'standard',
  bytes,
  ticket: null,
  admittedAt: 0,
  app: 'a',
  ts: 0,
  type: 'log',
  origin: 'direct',
});

describe('BoundedLane', () => {
  it('admits all or nothing, by count', () => {
    const lane = new BoundedLane('standard', { maxEvents: 5, maxBytes: 1e6 });
    expect(lane.tryAdmit([item(), item(), item()], 300)).toBe(true);
    expect(lane.tryAdmit([item(), item(), item()], 300)).toBe(false);
    expect(lane.heldEvents).toBe(3);
    expect(lane.tryAdmit([item(), item()], 200)).toBe(true);
    expect(lane.heldEvents).toBe(5);
  });

  it('admits all or nothing, by bytes', () => {
    const lane = new BoundedLane('error', { maxEvents: 100, maxBytes: 250 });
    expect(lane.tryAdmit([item(), item()], 200)).toBe(true);
    expect(lane.tryAdmit([item()], 100)).toBe(false);
    expect(lane.heldBytes).toBe(200);
  });

  it('keeps taken events counted until released (a batch in flight still holds room)', () => {
    const lane = new BoundedLane('standard', { maxEvents: 2, maxBytes: 1e6 });
    lane.tryAdmit([item(), item()], 200);
    const taken = lane.shift(10);
    expect(taken).toHaveLength(2);
    expect(lane.queued).toBe(0);
    expect(lane.tryAdmit([item()], 100)).toBe(false);
    lane.release(taken);
    expect(lane.heldEvents).toBe(0);
    expect(lane.heldBytes).toBe(0);
    expect(lane.tryAdmit([item()], 100)).toBe(true);
  });

  it('is FIFO across many takes', () => {
    const lane = new BoundedLane('standard', { maxEvents: 20_000, maxBytes: 1e9 });
    const items = Array.from({ length: 10_000 }, (_, i) => ({ ...item(), admittedAt: i }));
    lane.tryAdmit(items, 1e6);
    const order: number[] = [];
    for (;;) {
      const t = lane.shift(333);
      if (t.length === 0) break;
      order.push(...t.map((x) => x.admittedAt));
    }
    expect(order).toEqual(items.map((x) => x.admittedAt));
  });
});

describe('DrainRate', () => {
  it('measures the drain rate over a sliding window', () => {
    let now = 0;
    const rate = new DrainRate({ now: () => now }, 5000);
    rate.record(500);
    now = 1000;
    rate.record(500);
    expect(rate.perSecond()).toBe(200);
    now = 7000;
    expect(rate.perSecond()).toBe(0);
  });
});
