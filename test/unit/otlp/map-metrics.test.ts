import { mapMetrics } from '../../../src/otlp/map-metrics';
import { ctx, expectValidAsBuilt, kv, nanos, NOW, RESOURCE } from './fixtures';

const DELTA = 1;
const CUMULATIVE = 2;

function request(metrics: unknown[]) {
  return { resourceMetrics: [{ resource: RESOURCE, scopeMetrics: [{ scope: { name: 'm' }, metrics }] }] };
}

const point = (extra: Record<string, unknown>) => ({
  startTimeUnixNano: nanos(NOW - 60_000),
  timeUnixNano: nanos(NOW),
  attributes: [kv('region', { stringValue: 'eu' })],
  ...extra,
});

describe('metrics mapping', () => {
  it('gauge and delta sum points → samples; every event passes the intake', () => {
    const out = mapMetrics(
      request([
        {
          name: 'queue.depth',
          unit: '{item}',
          gauge: { dataPoints: [point({ asDouble: 2.5 }), point({ asInt: '7' })] },
        },
        {
          name: 'orders',
          sum: { aggregationTemporality: DELTA, isMonotonic: true, dataPoints: [point({ asInt: 3 })] },
        },
      ]),
      ctx(),
    );
    expect(out.events.map((e) => [e.name, e.value])).toEqual([
      ['queue.depth', 2.5],
      ['queue.depth', 7],
      ['orders', 3],
    ]);
    expect(out.events[0]).toMatchObject({
      type: 'metric',
      ts: NOW,
      app: 'web-shop',
      version: '1.4.2',
      env: 'prod',
      attributes: { 'otel.unit': '{item}', region: 'eu' },
    });
    out.events.forEach(expectValidAsBuilt);
  });

  it('cumulative: monotonic sums and histograms become _cumulative readings with otel.start_ts; up-down sums are levels', () => {
    const out = mapMetrics(
      request([
        {
          name: 'orders',
          sum: { aggregationTemporality: CUMULATIVE, isMonotonic: true, dataPoints: [point({ asInt: 12 })] },
        },
        {
          name: 'in.flight',
          sum: { aggregationTemporality: CUMULATIVE, isMonotonic: false, dataPoints: [point({ asInt: 4 })] },
        },
        {
          name: 'latency',
          histogram: {
            aggregationTemporality: CUMULATIVE,
            dataPoints: [point({ count: '2', sum: 30, min: 10, max: 20 })],
          },
        },
      ]),
      ctx(),
    );
    expect(out.events.map((e) => [e.name, e.value ?? e.summary])).toEqual([
      ['orders_cumulative', 12],
      ['in.flight', 4],
      ['latency_cumulative', { count: 2, sum: 30, min: 10, max: 20, avg: 15 }],
    ]);
    expect(out.events[0]?.attributes).toMatchObject({ 'otel.start_ts': NOW - 60_000 });
    expect(out.events[1]?.attributes).not.toHaveProperty('otel.start_ts');
  });

  it('histogram without min/max: estimated from the non-empty buckets’ bounds, and marked', () => {
    const out = mapMetrics(
      request([
        {
          name: 'latency',
          histogram: {
            aggregationTemporality: DELTA,
            // buckets: (-inf,10] (10,50] (50,100] (100,+inf)
            dataPoints: [
              point({
                count: '3',
                sum: 120,
                bucketCounts: ['0', '2', '1', '0'],
                explicitBounds: [10, 50, 100],
              }),
            ],
          },
        },
      ]),
      ctx(),
    );
    expect(out.events[0]).toMatchObject({
      summary: { count: 3, sum: 120, min: 10, max: 100, avg: 40 },
      attributes: { 'otel.estimated': 'min_max' },
    });
  });

  it('open-ended buckets use the average, clamped to the finite side; without buckets min = max = average', () => {
    const out = mapMetrics(
      request([
        {
          name: 'a',
          histogram: {
            aggregationTemporality: DELTA,
            dataPoints: [
              point({ count: '2', sum: 400, bucketCounts: ['0', '0', '2'], explicitBounds: [10, 50] }),
              point({ count: '4', sum: 8 }),
            ],
          },
        },
        {
          name: 'e',
          exponentialHistogram: {
            aggregationTemporality: DELTA,
            dataPoints: [point({ count: '2', sum: 6, min: 1 })],
          },
        },
        {
          name: 's',
          summary: {
            dataPoints: [
              point({
                count: '4',
                sum: 10,
                quantileValues: [
                  { quantile: 0, value: 1 },
                  { quantile: 0.5, value: 2 },
                  { quantile: 1, value: 5 },
                ],
              }),
            ],
          },
        },
      ]),
      ctx(),
    );
    expect(out.events.map((e) => e.summary)).toEqual([
      { count: 2, sum: 400, min: 50, max: 200, avg: 200 },
      { count: 4, sum: 8, min: 2, max: 2, avg: 2 },
      { count: 2, sum: 6, min: 1, max: 3, avg: 3 },
      { count: 4, sum: 10, min: 1, max: 5, avg: 2.5 },
    ]);
  });

  it('points that cannot be mapped are counted by reason; empty histogram points are skipped', () => {
    const out = mapMetrics(
      request([
        {
          name: 'g',
          gauge: { dataPoints: [point({}), point({ asDouble: 'Infinity' }), point({ asDouble: 1.7e308 })] },
        },
        { name: 's', sum: { aggregationTemporality: 0, dataPoints: [point({ asInt: 1 })] } },
        { name: 'h', histogram: { aggregationTemporality: DELTA, dataPoints: [point({ count: '0' })] } },
      ]),
      ctx(),
    );
    expect(out.events).toEqual([]);
    expect(out.records).toBe(5);
    expect(out.skipped).toBe(1);
    expect(Object.fromEntries(out.unmapped)).toEqual({
      value_missing: 1,
      value_not_finite: 1,
      value_out_of_range: 1,
      temporality_unspecified: 1,
    });
  });

  it('ids are deterministic per point and differ when the point or the resource differs', () => {
    const one = request([{ name: 'g', gauge: { dataPoints: [point({ asInt: 1 })] } }]);
    const again = mapMetrics(one, ctx()).events[0]?.id;
    expect(mapMetrics(one, ctx()).events[0]?.id).toBe(again);
    const otherValue = mapMetrics(
      request([{ name: 'g', gauge: { dataPoints: [point({ asInt: 2 })] } }]),
      ctx(),
    );
    expect(otherValue.events[0]?.id).not.toBe(again);
    const otherHost = JSON.parse(JSON.stringify(one));
    otherHost.resourceMetrics[0].resource.attributes[3].value.stringValue = 'box-2';
    expect(mapMetrics(otherHost, ctx()).events[0]?.id).not.toBe(again);
  });
});
