import { currentSchema, staleReason, type KeptDataset } from '../../bench/kept-database';
import { quantile } from '../../bench/read-timing';
import { readViews } from '../../bench/read-views';
import {
  datasetDatabaseName,
  datasetEvents,
  datasetStart,
  readsDataset,
  readsSuiteName,
  type ReadsDataset,
} from '../../bench/reads-dataset';

const DAY_MS = 86_400_000;
const END = Date.UTC(2026, 11, 7, 0, 0);
const D: ReadsDataset = { events: 70_000, apps: 10, days: 7, seed: 43 };

describe('the reads data set', () => {
  it('is 10 million events of 10 apps over 7 days, another size by BENCH_READS_EVENTS, small when quick', () => {
    expect(readsDataset({}, false)).toEqual({ events: 10_000_000, apps: 10, days: 7, seed: 43 });
    expect(readsDataset({ BENCH_READS_EVENTS: '50000000' }, false).events).toBe(50_000_000);
    expect(readsDataset({}, true).events).toBeLessThanOrEqual(100_000);
    expect(readsDataset({ BENCH_READS_EVENTS: 'many' }, false).events).toBe(10_000_000);
  });

  it('records the default size as the reads suite and another as its own, reads-<size>', () => {
    expect(readsSuiteName(readsDataset({}, false), false)).toBe('reads');
    expect(readsSuiteName(readsDataset({}, true), true)).toBe('reads');
    expect(readsSuiteName(readsDataset({ BENCH_READS_EVENTS: '50000000' }, false), false)).toBe('reads-50m');
    expect(readsSuiteName(readsDataset({ BENCH_READS_EVENTS: '2500000' }, false), false)).toBe('reads-2_5m');
    expect(readsSuiteName(readsDataset({ BENCH_READS_EVENTS: '300000' }, false), false)).toBe('reads-300k');
  });

  it('names its database after what it holds', () => {
    expect(datasetDatabaseName(D)).toBe('sluice_bench_reads_70000_a10_d7_s43');
    expect(datasetDatabaseName(D).length).toBeLessThanOrEqual(63);
  });

  const events = datasetEvents(D, datasetStart(D, END), 0, D.events);

  it('spans the days before its end, in ts order, every event inside', () => {
    expect(events).toHaveLength(D.events);
    const start = END - 7 * DAY_MS;
    const ts = events.map((e) => e.ts);
    expect(Math.min(...ts)).toBeGreaterThanOrEqual(start - 1000);
    expect(Math.max(...ts)).toBeLessThan(END);
    // In ts order, up to the second of jitter the bench's generator gives each event.
    expect(ts.filter((t, i) => i > 0 && t <= (ts[i - 1] as number) - 1000)).toEqual([]);
    // Every day holds its share (a seventh, within 2 %).
    const perDay = new Array<number>(7).fill(0);
    for (const e of events) perDay[Math.min(6, Math.max(0, Math.floor((e.ts - start) / DAY_MS)))]!++;
    for (const n of perDay) expect(Math.abs(n - D.events / 7)).toBeLessThan(D.events * 0.02);
  });

  it('has the bench mix of types, spread evenly over the apps', () => {
    const byType = new Map<string, number>();
    const byApp = new Map<string, number>();
    for (const e of events) {
      byType.set(e.type, (byType.get(e.type) ?? 0) + 1);
      byApp.set(e.source.app, (byApp.get(e.source.app) ?? 0) + 1);
    }
    expect(byType.get('metric')! / D.events).toBeCloseTo(0.7, 1);
    for (const t of ['lifecycle', 'log', 'error']) expect(byType.get(t)! / D.events).toBeCloseTo(0.1, 1);
    expect([...byApp.keys()].sort()).toEqual(Array.from({ length: 10 }, (_, i) => `app-${i}`).sort());
    for (const n of byApp.values()) expect(Math.abs(n - D.events / 10)).toBeLessThan(D.events * 0.01);
  });

  it('makes the same slice again for the same bounds (new ids only)', () => {
    const again = datasetEvents(D, datasetStart(D, END), 1000, 1100);
    const strip = (e: (typeof events)[number]): unknown => ({ ...e, id: undefined });
    expect(again.map(strip)).toEqual(datasetEvents(D, datasetStart(D, END), 1000, 1100).map(strip));
    expect(again).toHaveLength(100);
  });
});

describe('the views the reads suite times', () => {
  const views = readViews(END, 7);

  it('covers every read route, each window inside the data set', () => {
    const routes = new Set(views.map((v) => v.path.split('?')[0]));
    expect([...routes].sort()).toEqual(
      [
        '/v1/apps',
        '/v1/error-groups',
        '/v1/events',
        '/v1/metrics',
        '/v1/metrics/names',
        '/v1/outcomes',
      ].sort(),
    );
    for (const v of views) {
      const q = new URLSearchParams(v.path.split('?')[1]);
      expect(Number(q.get('to'))).toBe(END);
      expect(Number(q.get('from'))).toBeGreaterThanOrEqual(END - 7 * DAY_MS);
    }
    expect(new Set(views.map((v) => v.name)).size).toBe(views.length);
  });

  it('has text and attribute filters, error groups over 1 h, 24 h and 7 d, charts at each resolution', () => {
    const paths = views.map((v) => v.path);
    expect(paths.some((p) => p.includes('text='))).toBe(true);
    expect(paths.some((p) => p.includes('attr.'))).toBe(true);
    const groups = paths.filter((p) => p.startsWith('/v1/error-groups?'));
    const spans = groups.map((p) => {
      const q = new URLSearchParams(p.split('?')[1]);
      return (Number(q.get('to')) - Number(q.get('from'))) / 3_600_000;
    });
    expect(spans).toEqual(expect.arrayContaining([1, 24, 168]));
    for (const r of ['raw', '1m', '1h']) expect(paths.some((p) => p.includes(`resolution=${r}`))).toBe(true);
  });
});

describe('a kept data set', () => {
  const kept: KeptDataset = { events: 70_000, seed: 43, endMs: END, loadSeconds: 1, schema: currentSchema() };

  it('is reused only for the same data set, schema, and data young enough', () => {
    expect(staleReason(kept, 70_000, 43, END + DAY_MS)).toBeNull();
    expect(staleReason(null, 70_000, 43, END)).toMatch(/no database/);
    expect(staleReason(kept, 10_000_000, 43, END)).toMatch(/another data set/);
    expect(staleReason({ ...kept, schema: '1:events' }, 70_000, 43, END)).toMatch(/schema/);
    expect(staleReason(kept, 70_000, 43, END + 21 * DAY_MS)).toMatch(/old/);
  });
});

describe('quantile', () => {
  it('is the nearest rank', () => {
    expect(quantile([5, 1, 4, 2, 3], 0.5)).toBe(3);
    expect(
      quantile(
        Array.from({ length: 20 }, (_, i) => i + 1),
        0.95,
      ),
    ).toBe(19);
    expect(quantile([], 0.5)).toBeNaN();
  });
});
