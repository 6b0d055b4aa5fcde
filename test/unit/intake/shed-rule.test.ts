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

/** `shed` with `n` ingest requests held (read or being worked on). */
function holding(shed: ShedRule, n: number): ShedRule {
  for (let i = 0; i < n; i++) shed.hold();
  return shed;
}

describe('ShedRule', () => {
  it('counts the longest of its waits as the delay', () => {
    expect(rule([3, 9.5, 1]).shed.delayMs()).toBe(9.5);
    expect(rule([]).shed.delayMs()).toBe(0);
  });

  it('refuses a request unread only once the delay reaches the threshold, and counts it', async () => {
    expect(holding(rule([9.9, 2]).shed, 5).refuseUnread()).toBeNull();
    const { shed, metrics } = rule([2, 10]);
    expect(holding(shed, 5).refuseUnread()).toEqual({ retryAfterSeconds: 2 });
    const refused = (await metrics.requestsRejected.get()).values;
    expect(refused).toEqual([expect.objectContaining({ labels: { code: 'overloaded' }, value: 1 })]);
  });

  it('never refuses while it holds fewer than two other ingest requests: the delay is not its own', () => {
    const { shed } = rule([1e6]);
    expect(holding(shed, 0).refuseUnread()).toBeNull();
    expect(holding(shed, 1).refuseUnread()).toBeNull();
    expect(holding(shed, 2).refuseUnread()).not.toBeNull();
  });

  it('never refuses when shedding is off (threshold 0)', () => {
    expect(holding(rule([1e6], 0).shed, 5).refuseUnread()).toBeNull();
  });

  it('counts a held request until it is released, once', () => {
    const { shed } = rule([1e6]);
    const first = shed.hold();
    const second = shed.hold();
    expect(shed.refuseUnread()).not.toBeNull();
    first();
    first();
    expect(shed.refuseUnread()).toBeNull();
    second();
    expect(shed.refuseUnread()).toBeNull();
  });

  it('tells the loss map of each refusal, with the request headers, and of nothing it lets through', () => {
    const seen: unknown[] = [];
    const metrics = createMetrics();
    const shed = new ShedRule({
      waitsMs: [() => 50],
      shedAtMs: 10,
      rejected: metrics.requestsRejected,
      countRefused: (headers) => seen.push(headers),
    });
    expect(shed.refuseUnread({ 'x-api-key': 'k' })).toBeNull();
    holding(shed, 2);
    expect(shed.refuseUnread({ 'x-api-key': 'k' })).not.toBeNull();
    expect(seen).toEqual([{ 'x-api-key': 'k' }]);
  });
});
