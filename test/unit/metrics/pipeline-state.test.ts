import { Registry } from 'prom-client';
import { AppActivity, OTHER_APPS } from '../../../src/metrics/app-activity';
import { createMetrics } from '../../../src/metrics/instruments';
import { PipelineState, type PipelineSources } from '../../../src/metrics/pipeline-state';

function harness(over: Partial<PipelineSources> = {}) {
  let now = 1_000_000;
  const clock = { now: () => now };
  const metrics = createMetrics(new Registry());
  const activity = new AppActivity(3);
  const state = new PipelineState({
    mode: 'direct',
    storage: 'sqlite',
    metrics,
    lanes: () => [{ name: 'standard', events: 5, capacity: 10, bytes: 50, capacityBytes: 100 }],
    writer: () => ({ inFlight: 1, maxInFlight: 3, drainPerSecond: 12.34 }),
    queue: null,
    activity,
    limitPerSecond: (app) => (app === 'unlimited' ? null : 100),
    health: () => ({ ready: true, draining: false, storage: 'up', redis: 'off', nats: 'off' }),
    clock,
    ...over,
  });
  return { state, metrics, activity, advance: (ms: number) => (now += ms) };
}

describe('PipelineState', () => {
  it('answers totals and no rates before a second sample', async () => {
    const h = harness();
    h.metrics.eventsAccepted.inc({ type: 'log', lane: 'standard' }, 3);
    await h.state.sample();
    const s = h.state.snapshot() as any;
    expect(s.rates).toBeNull();
    expect(s.totals.accepted).toBe(3);
    expect(s.history).toEqual([]);
    expect(s.lanes).toEqual([{ name: 'standard', events: 5, capacity: 10, bytes: 50, capacity_bytes: 100 }]);
  });

  it('derives per-second rates from the instruments between samples', async () => {
    const h = harness();
    await h.state.sample();
    h.advance(2000);
    h.metrics.eventsAccepted.inc({ type: 'log', lane: 'standard' }, 10);
    h.metrics.eventsAccepted.inc({ type: 'error', lane: 'error' }, 4);
    h.metrics.eventsThrottled.inc({ reason: 'rate_limited', type: 'log' }, 6);
    h.metrics.eventsRejected.inc({ reason: 'id_invalid' }, 2);
    h.metrics.requestsRejected.inc({ code: 'overloaded' }, 8);
    h.metrics.requestsRejected.inc({ code: 'invalid_json' }, 100);
    h.metrics.eventsStored.inc({ lane: 'standard' }, 14);
    await h.state.sample();
    const s = h.state.snapshot() as any;
    expect(s.rates).toEqual({
      at: 1_002_000,
      received: 0,
      accepted: 7,
      rejected: 1,
      throttled: 3,
      shed_requests: 4,
      stored: 7,
      dropped: 0,
    });
    expect(s.history).toHaveLength(1);
  });

  it('summarises the writer over its window: batches, mean size, mean and p99 commit time', async () => {
    const h = harness();
    await h.state.sample();
    for (let i = 0; i < 99; i++) {
      h.metrics.batchSize.observe(200);
      h.metrics.flushDuration.observe(0.004);
    }
    h.metrics.batchSize.observe(200);
    h.metrics.flushDuration.observe(0.2);
    h.advance(10_000);
    await h.state.sample();
    const w = (h.state.snapshot() as any).writer;
    expect(w).toMatchObject({
      in_flight: 1,
      max_in_flight: 3,
      drain_per_s: 12.3,
      batches_per_s: 10,
      events_per_batch: 200,
      commit_ms_p99: 5,
    });
    expect(w.commit_ms_mean).toBeCloseTo((99 * 4 + 200) / 100, 2);
  });

  it('lists the busiest apps with their rate-limit use (errors never spend it), and keeps history bounded', async () => {
    const h = harness();
    await h.state.sample();
    h.activity.record('shop', 50, 0);
    h.activity.record('shop', 10, 0, 10);
    h.activity.record('blog', 5, 20);
    h.activity.record('unlimited', 1, 0);
    h.advance(1000);
    await h.state.sample();
    const apps = (h.state.snapshot() as any).apps;
    expect(apps).toEqual([
      {
        app: 'shop',
        accepted_per_s: 60,
        errors_per_s: 10,
        throttled_per_s: 0,
        limit_per_s: 100,
        limit_use: 0.5,
      },
      {
        app: 'blog',
        accepted_per_s: 5,
        errors_per_s: 0,
        throttled_per_s: 20,
        limit_per_s: 100,
        limit_use: 0.05,
      },
      {
        app: 'unlimited',
        accepted_per_s: 1,
        errors_per_s: 0,
        throttled_per_s: 0,
        limit_per_s: null,
        limit_use: null,
      },
    ]);
    for (let i = 0; i < 70; i++) {
      h.advance(1000);
      await h.state.sample();
    }
    expect((h.state.snapshot() as any).history).toHaveLength(60);
    expect((h.state.snapshot() as any).apps).toEqual([]);
  });
});

describe('AppActivity', () => {
  it('tallies at most its bound of apps; the rest under one name; idle apps are forgotten', () => {
    const a = new AppActivity(2);
    a.record('a', 1, 0);
    a.record('b', 1, 0);
    a.record('c', 1, 2);
    a.record('d', 3, 0);
    expect([...a.all.keys()]).toEqual(['a', 'b', OTHER_APPS]);
    expect(a.all.get(OTHER_APPS)).toMatchObject({ accepted: 4, throttled: 2 });
    a.tick();
    a.tick();
    a.record('a', 1, 0);
    a.forgetIdle(1);
    expect([...a.all.keys()]).toEqual(['a']);
  });
});
