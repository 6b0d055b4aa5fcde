import { waitFor } from '../support/http';
import type { InProcessCollector } from '../support/in-process';
import { tempSqlitePath } from '../support/postgres';
import {
  bySeq,
  metricPoints,
  runOtelClient,
  startWithOtlp,
  storedEvents,
  uniqueApp,
  type Encoding,
} from './otlp-support';

/**
 * The real OpenTelemetry JS SDK as the client (an app process: test/support/processes/
 * otel-client.ts), through both exporters (OTLP/HTTP JSON and protobuf), against a collector
 * with the defaults a user gets (SQLite, rate limit 100/s, shedding on); only the OTLP port is
 * picked free. What was sent is read back through the read API, each record exactly once.
 */
describe.each<Encoding>(['json', 'protobuf'])('OTLP with the OpenTelemetry JS SDK (%s)', (encoding) => {
  let c: InProcessCollector;
  let url: string;

  beforeAll(async () => {
    ({ c, otlpUrl: url } = await startWithOtlp({
      SLUICE_SQLITE_PATH: tempSqlitePath(`otlp-sdk-${encoding}`),
      SLUICE_RATE_LIMIT: '100',
      SLUICE_SHED_LAG_MS: '10',
    }));
  });

  afterAll(async () => {
    await c?.stop();
  });

  it('logs arrive as log events, errors and exceptions as error events, each once', async () => {
    const app = uniqueApp('logs');
    const run = await runOtelClient({ scenario: 'logs', url, app, encoding });
    expect(run.exports).toEqual([{ code: 0 }]);

    const events = await waitFor('22 events', async () => {
      const e = await storedEvents(c.url, app);
      return e.length >= 22 ? e : null;
    });
    const seqs = bySeq(events);
    for (let seq = 0; seq < 20; seq++) {
      expect(seqs.get(seq)).toHaveLength(1);
      expect(seqs.get(seq)?.[0]).toMatchObject({
        type: 'log',
        name: 'checkout-service',
        message: `cart updated ${seq}`,
        source: { app, version: '2.0.1', env: 'test' },
        attributes: { seq, 'cart.items': seq % 4, tags: '["a","b"]', 'log.severity': 'INFO' },
      });
    }
    expect(seqs.get(100)).toEqual([
      expect.objectContaining({ type: 'error', error: { message: 'payment failed' } }),
    ]);
    expect(seqs.get(101)).toEqual([
      expect.objectContaining({
        type: 'error',
        message: 'retrying',
        error: {
          message: 'upstream timed out',
          kind: 'TimeoutError',
          stack: 'TimeoutError: upstream timed out\n    at pay (pay.js:1:1)',
        },
      }),
    ]);
    expect(events).toHaveLength(22);
  });

  it('delta counters and histograms arrive as samples and summaries with the values sent', async () => {
    const app = uniqueApp('delta');
    const run = await runOtelClient({ scenario: 'metrics', temporality: 'delta', url, app, encoding });
    expect(run.exports).toEqual([{ code: 0 }, { code: 0 }]);

    const samples = await waitFor('two order samples', async () => {
      const p = await metricPoints(c.url, app, 'orders.placed');
      return p.length >= 2 ? p : null;
    });
    // Two intervals: 3 + 4, then 5.
    expect(samples.map((p) => [p.count, p.sum])).toEqual([
      [1, 7],
      [1, 5],
    ]);
    const summaries = await waitFor('two latency summaries', async () => {
      const p = await metricPoints(c.url, app, 'http.server.duration');
      return p.length >= 2 ? p : null;
    });
    expect(summaries).toEqual([
      expect.objectContaining({ count: 4, min: 1, max: 30, sum: 50 }),
      expect.objectContaining({ count: 1, min: 100, max: 100, sum: 100 }),
    ]);
    const events = await storedEvents(c.url, app, '&name=http.server.duration');
    expect(events[0].attributes).toMatchObject({ route: '/checkout', 'otel.unit': 'ms' });
    expect(await metricPoints(c.url, app, 'orders.placed_cumulative')).toEqual([]);
  });

  it('cumulative counters and histograms arrive as _cumulative readings, never as deltas', async () => {
    const app = uniqueApp('cumulative');
    const run = await runOtelClient({ scenario: 'metrics', temporality: 'cumulative', url, app, encoding });
    expect(run.exports).toEqual([{ code: 0 }, { code: 0 }]);

    const totals = await waitFor('two readings', async () => {
      const p = await metricPoints(c.url, app, 'orders.placed_cumulative');
      return p.length >= 2 ? p : null;
    });
    // Running totals as read (7, then 12), not stored under the delta name to be summed.
    expect(totals.map((p) => [p.count, p.sum])).toEqual([
      [1, 7],
      [1, 12],
    ]);
    expect(await metricPoints(c.url, app, 'orders.placed')).toEqual([]);
    const summaries = await waitFor('two histogram readings', async () => {
      const p = await metricPoints(c.url, app, 'http.server.duration_cumulative');
      return p.length >= 2 ? p : null;
    });
    expect(summaries).toEqual([
      expect.objectContaining({ count: 4, min: 1, max: 30, sum: 50 }),
      expect.objectContaining({ count: 5, min: 1, max: 100, sum: 150 }),
    ]);
    const events = await storedEvents(c.url, app, '&name=orders.placed_cumulative');
    const startTs = events.map((e) => e.attributes['otel.start_ts']);
    expect(new Set(startTs).size).toBe(1);
    expect(startTs[0]).toBeLessThanOrEqual(Math.min(...events.map((e) => e.ts)));
  });

  it('a failed span becomes one error event with its trace and span ids; other spans are not stored', async () => {
    const app = uniqueApp('traces');
    const run = await runOtelClient({ scenario: 'traces', url, app, encoding });
    expect(run.exports).toEqual([{ code: 0 }]);

    const events = await waitFor('two error events', async () => {
      const e = await storedEvents(c.url, app);
      return e.length >= 2 ? e : null;
    });
    expect(events).toHaveLength(2);
    const checkout = events.find((e) => e.name === 'POST.checkout');
    expect(checkout).toMatchObject({
      type: 'error',
      error: { message: 'card declined', kind: 'PaymentError' },
      attributes: {
        trace_id: run.failed.traceId,
        span_id: run.failed.spanId,
        'http.route': '/checkout',
      },
    });
    expect(checkout.error.stack).toContain('card declined');
    expect(events.find((e) => e.name === 'GET.cart')).toMatchObject({
      type: 'error',
      error: { message: 'cart unavailable' },
      attributes: { trace_id: run.statusOnly.traceId, span_id: run.statusOnly.spanId },
    });
  });
});
