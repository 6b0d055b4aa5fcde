import { createMetrics } from '../../../src/metrics/instruments';
import { ShedRule } from '../../../src/intake/shed-rule';

function rule(waits: number[], shedAtMs = 10) {
  const metrics = createMetrics();
  const shed = new ShedRule({
    waitsMs: waits.map((w) => () => w),
    shedAtMs,
    rejected: metrics.requestsRejected,
  });
  return { shed, metrics };
}

describe('ShedRule', () => {
  it('counts the longest of its waits as the delay', () => {
    expect(rule([3, 9.5, 1]).shed.delayMs()).toBe(9.5);
    expect(rule([]).shed.delayMs()).toBe(0);
  });

  it('refuses a request unread only once the delay reaches the threshold, and counts it', async () => {
    expect(rule([9.9, 2]).shed.refuseUnread(5)).toBeNull();
    const { shed, metrics } = rule([2, 10]);
    expect(shed.refuseUnread(5)).toEqual({ retryAfterSeconds: 2 });
    const refused = (await metrics.requestsRejected.get()).values;
    expect(refused).toEqual([expect.objectContaining({ labels: { code: 'overloaded' }, value: 1 })]);
  });

  it('never refuses while it holds fewer than two other ingest requests: the delay is not its own', () => {
    const { shed } = rule([1e6]);
    expect(shed.refuseUnread(0)).toBeNull();
    expect(shed.refuseUnread(1)).toBeNull();
    expect(shed.refuseUnread(2)).not.toBeNull();
  });

  it('never refuses when shedding is off (threshold 0)', () => {
    expect(rule([1e6], 0).shed.refuseUnread(5)).toBeNull();
  });
});
