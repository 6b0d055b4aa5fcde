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

  it('tells the loss map of each refusal, with its request line and headers, and of nothing it lets through', () => {
    const seen: unknown[] = [];
    const metrics = createMetrics();
    const shed = new ShedRule({
      waitsMs: [() => 50],
      shedAtMs: 10,
      rejected: metrics.requestsRejected,
      countRefused: (request) => seen.push(request),
    });
    const request = { method: 'POST', url: '/api/1/envelope/?sentry_key=k', headers: { 'x-api-key': 'k' } };
    expect(shed.refuseUnread(request)).toBeNull();
    holding(shed, 2);
    expect(shed.refuseUnread(request)).not.toBeNull();
    expect(seen).toEqual([request]);
  });
});

describe('ShedRule, by flow', () => {
  it('refuses only the flow that sends most while saturated, never a quiet one', () => {
    const metrics = createMetrics();
    let now = 0;
    // The process lags for 100 ms after it let a loud request through (its work is what saturates).
    let loudLetThroughAt = -Infinity;
    const shed = new ShedRule({
      waitsMs: [() => (now - loudLetThroughAt < 100 ? 50 : 0)],
      shedAtMs: 10,
      rejected: metrics.requestsRejected,
      flowOf: ({ headers }) => String(headers['x-sluice-app'] ?? ''),
      now: () => now,
    });
    holding(shed, 4);
    const loud = { headers: { 'x-sluice-app': 'loud', 'content-length': '100000' } };
    const quiet = { headers: { 'x-sluice-app': 'quiet', 'content-length': '1000' } };
    let loudRefused = 0;
    let quietRefused = 0;
    // 5 s: the loud flow sends 50 requests of 100 kB a second, the quiet one 1 of 1 kB.
    for (let ms = 0; ms < 5000; ms += 20) {
      now = ms;
      if (shed.refuseUnread(loud) !== null) loudRefused++;
      else loudLetThroughAt = now;
      if (ms % 1000 === 500 && shed.refuseUnread(quiet) !== null) quietRefused++;
    }
    expect(quietRefused).toBe(0);
    expect(loudRefused).toBeGreaterThan(100);
  });

  it('refuses every flow alike when they send alike', () => {
    const metrics = createMetrics();
    let now = 0;
    const shed = new ShedRule({
      waitsMs: [() => 50],
      shedAtMs: 10,
      rejected: metrics.requestsRejected,
      flowOf: ({ headers }) => String(headers['x-sluice-app'] ?? ''),
      now: () => now,
    });
    holding(shed, 4);
    const refused = { a: 0, b: 0 };
    for (let ms = 0; ms < 5000; ms += 20) {
      now = ms;
      for (const app of ['a', 'b'] as const)
        if (shed.refuseUnread({ headers: { 'x-sluice-app': app, 'content-length': '1000' } }) !== null)
          refused[app]++;
    }
    expect(refused.a).toBeGreaterThan(50);
    expect(refused.b).toBeGreaterThan(50);
  });
});
