import { MetricAggregator, type ClosedSeries } from '../../../sdk/src/aggregator';

const W = 5000;
const T0 = Date.UTC(2025, 5, 1, 12, 0, 0); // a multiple of 5000

function setup(maxSeries = 100): { agg: MetricAggregator; closed: ClosedSeries[] } {
  const closed: ClosedSeries[] = [];
  return { agg: new MetricAggregator(W, maxSeries, (c) => closed.push(c)), closed };
}

describe('MetricAggregator', () => {
  it('summarises one window: count, min, max, sum, avg', () => {
    const { agg, closed } = setup();
    for (const [i, v] of [3, -1, 10, 4].entries()) agg.add('frame_drop', v, undefined, T0 + i * 100);
    agg.closeAll();
    expect(closed).toEqual([
      {
        name: 'frame_drop',
        windowStart: T0,
        attributes: undefined,
        summary: { count: 4, min: -1, max: 10, sum: 16, avg: 4 },
      },
    ]);
  });

  it('one sample: min = max = avg = value', () => {
    const { agg, closed } = setup();
    agg.add('m', 2.5, undefined, T0 + 1);
    agg.closeAll();
    expect(closed[0]!.summary).toEqual({ count: 1, min: 2.5, max: 2.5, sum: 2.5, avg: 2.5 });
  });

  it('splits samples of different windows, aligned to multiples of the window', () => {
    const { agg, closed } = setup();
    agg.add('m', 1, undefined, T0 + 4999);
    agg.add('m', 5, undefined, T0 + 5000); // next window: closes the first
    expect(closed).toHaveLength(1);
    expect(closed[0]).toMatchObject({ windowStart: T0, summary: { count: 1, sum: 1 } });
    agg.add('m', 7, undefined, T0 + 9999);
    agg.closeAll();
    expect(closed[1]).toMatchObject({
      windowStart: T0 + 5000,
      summary: { count: 2, min: 5, max: 7, sum: 12, avg: 6 },
    });
  });

  it('keeps different attribute sets apart, whatever the attribute order', () => {
    const { agg, closed } = setup();
    agg.add('m', 1, { route: '/a', ok: true }, T0);
    agg.add('m', 2, { ok: true, route: '/a' }, T0 + 1);
    agg.add('m', 10, { route: '/b', ok: true }, T0 + 2);
    agg.add('m', 20, undefined, T0 + 3);
    agg.closeAll();
    const byRoute = new Map(closed.map((c) => [String(c.attributes?.route), c.summary]));
    expect(closed).toHaveLength(3);
    expect(byRoute.get('/a')).toEqual({ count: 2, min: 1, max: 2, sum: 3, avg: 1.5 });
    expect(byRoute.get('/b')).toEqual({ count: 1, min: 10, max: 10, sum: 10, avg: 10 });
    expect(byRoute.get('undefined')).toMatchObject({ count: 1, sum: 20 });
  });

  it('closeEnded closes only windows time has passed, and reports the next end', () => {
    const { agg, closed } = setup();
    expect(agg.nextCloseAt).toBe(Infinity);
    agg.add('a', 1, undefined, T0 + 100);
    expect(agg.nextCloseAt).toBe(T0 + W);
    agg.closeEnded(T0 + W - 1);
    expect(closed).toHaveLength(0);
    agg.closeEnded(T0 + W);
    expect(closed).toHaveLength(1);
    expect(agg.size).toBe(0);
    expect(agg.nextCloseAt).toBe(Infinity);
  });

  it('closeEnded keeps a series of a later window open', () => {
    const { agg, closed } = setup();
    agg.add('a', 1, undefined, T0);
    agg.add('b', 1, undefined, T0 + W + 1);
    agg.closeEnded(T0 + W);
    expect(closed.map((c) => c.name)).toEqual(['a']);
    expect(agg.nextCloseAt).toBe(T0 + 2 * W);
  });

  it('refuses a new series past the cap (the caller sends it raw)', () => {
    const { agg } = setup(2);
    expect(agg.add('a', 1, undefined, T0)).toBe(true);
    expect(agg.add('b', 1, undefined, T0)).toBe(true);
    expect(agg.add('c', 1, undefined, T0)).toBe(false);
    expect(agg.add('a', 2, undefined, T0)).toBe(true);
  });

  it('keeps many attribute sets of one name apart (keyed lookup past 8 sets), in any order', () => {
    const { agg, closed } = setup();
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 20; i++) {
        const attrs = round % 2 === 0 ? { shard: i, region: 'eu' } : { region: 'eu', shard: i };
        agg.add('db.latency', i * 10 + round, attrs, T0 + round);
      }
    }
    agg.closeEnded(T0 + W - 1);
    expect(agg.size).toBe(20);
    agg.add('db.latency', 1, { shard: 3, region: 'eu' }, T0 + W); // next window: closes shard 3 only
    expect(closed).toHaveLength(1);
    expect(closed[0]).toMatchObject({
      attributes: { shard: 3 },
      summary: { count: 3, min: 30, max: 32, sum: 93 },
    });
    agg.closeEnded(T0 + W);
    expect(closed).toHaveLength(20);
    expect(agg.size).toBe(1);
    for (const c of closed) expect(c.summary.count).toBe(3);
  });
});
