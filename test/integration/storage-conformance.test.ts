import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { EventType, TelemetryEvent } from '../../src/events/types';
import { createLogger } from '../../src/log/logger';
import type { EventQuery, MetricQuery, Storage } from '../../src/storage/port';
import { createSqliteStorage } from '../../src/storage/sqlite';
import { createTestDatabase, tempSqlitePath } from '../support/postgres';
import { attrs, telemetryEvent } from '../support/telemetry-events';
import { openPostgresStorage, writeEvents } from '../support/storage';

const DAY_MS = 86_400_000;
/** 2026-12-02T12:00:00Z: every event below sits within the partitions migrate creates around it. */
const NOW = Date.UTC(2026, 11, 2, 12);
const clock = { now: () => NOW };
const logger = createLogger('silent');

interface Harness {
  readonly storage: Storage;
  /** Another storage on the same data, for lifecycle tests. */
  open(): Storage;
  /** Empties both tables between tests. */
  reset(): Promise<void>;
  dispose(): Promise<void>;
}

async function postgresHarness(writeMethod: 'unnest' | 'copy'): Promise<Harness> {
  const db = await createTestDatabase(`conformance_${writeMethod}`);
  const open = (): Storage =>
    openPostgresStorage(db.url, {
      poolSize: 4,
      partitionsAheadDays: 2,
      retentionRawMs: 2 * DAY_MS,
      writeMethod,
      clock,
      logger,
    });
  const storage = open();
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  return {
    storage,
    open,
    reset: async () => void (await admin.query('TRUNCATE events, metric_blocks')),
    dispose: async () => {
      await storage.close();
      await admin.end();
      await db.drop();
    },
  };
}

async function sqliteHarness(): Promise<Harness> {
  const file = tempSqlitePath('conformance');
  const open = (): Storage => createSqliteStorage({ path: file, clock, logger });
  const storage = open();
  let admin: Database.Database | null = null;
  return {
    storage,
    open,
    reset: async () => {
      admin ??= new Database(file);
      admin.exec('DELETE FROM events; DELETE FROM metric_samples;');
    },
    dispose: async () => {
      await storage.close();
      admin?.close();
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    },
  };
}

const event = (type: EventType, over: Partial<TelemetryEvent> = {}) => telemetryEvent(type, over, NOW);

function newestFirst(a: TelemetryEvent, b: TelemetryEvent): number {
  return b.ts - a.ts || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

const TYPES: readonly EventType[] = ['metric', 'log', 'lifecycle', 'error'];

describe.each([
  ['postgres (unnest)', () => postgresHarness('unnest')],
  ['postgres (copy)', () => postgresHarness('copy')],
  ['sqlite', sqliteHarness],
])('Storage conformance: %s', (_name, makeHarness) => {
  let h: Harness;
  let storage: Storage;

  beforeAll(async () => {
    h = await makeHarness();
    storage = h.storage;
    await storage.migrate();
    await storage.migrate(); // idempotent
  });
  afterAll(() => h?.dispose());
  beforeEach(() => h.reset());

  const page = (q: Omit<EventQuery, 'limit'> & { limit?: number }) =>
    storage.queryEvents({ limit: 1000, ...q });

  it('round-trips every event type and field', async () => {
    const prototypeKeys = Object.getOwnPropertyNames(Object.prototype);
    // Raw JSON text, as the wire delivers it: JSON.parse makes "__proto__" an own key.
    const proto = attrs(
      JSON.parse('{"route":"/checkout","__proto__":"plain key","constructor":"also plain"}'),
    );
    expect(Object.keys(proto).sort()).toEqual(['__proto__', 'constructor', 'route']);
    const batch = [
      event('metric', {
        name: 'render.frame_drop',
        version: '1.4.2',
        env: 'prod',
        value: 0.1 + 0.2,
        attributes: attrs({
          ключ: 'значение 🚀',
          n: -12.5,
          big: Number.MAX_SAFE_INTEGER,
          tiny: 1e-300,
          ok: true,
        }),
      }),
      event('metric', {
        name: 'render.frame_drop_summary',
        ts: NOW - 59_000,
        value: null,
        summary: { count: 4, min: 1, max: 7, sum: 12, avg: 3 },
        message: 'a metric may carry a message',
      }),
      event('error', {
        ts: NOW - 58_000,
        error: {
          message: 'card declined',
          kind: 'PaymentError',
          stack: 'PaymentError: card declined\n    at pay (a.js:1:2)',
        },
        message: 'checkout failed',
        attributes: proto,
      }),
      event('error', { ts: NOW - 57_000, error: { message: '', kind: null, stack: null } }),
      event('lifecycle', { ts: NOW - 56_000, name: 'app.start', version: '2.0.0', env: 'staging' }),
      event('log', {
        ts: NOW - 55_000,
        message: 'héllo\twörld\n"quoted" \\ back',
        attributes: attrs({ empty: '', escaped: 'back\\slash\t"q"\n', plain: 'no escapes' }),
      }),
    ];

    expect(await writeEvents(storage, batch)).toEqual({ inserted: batch.length });
    const { events, next } = await page({});

    expect(events).toEqual([...batch].sort(newestFirst));
    expect(next).toBeNull();
    for (const e of events) expect(Object.getPrototypeOf(e.attributes)).toBeNull();
    const read = events.find((e) => e.id === batch[2]?.id)?.attributes;
    expect(Object.getOwnPropertyDescriptor(read, '__proto__')?.value).toBe('plain key');
    expect(Object.keys(read ?? {}).sort()).toEqual(['__proto__', 'constructor', 'route']);
    expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(prototypeKeys);
    const fresh: Record<string, unknown> = {};
    expect(fresh.route).toBeUndefined();
    expect(fresh.constructor).toBe(Object);
  });

  it('stores text PostgreSQL cannot hold (U+0000, lone surrogates) as U+FFFD, identically', async () => {
    const e = event('error', {
      message: 'nul\u0000here',
      error: { message: 'lone \ud800 high', kind: 'K\udc00', stack: 'at\u0000x' },
      attributes: attrs({ 'k\u0000': 'v\ud83d', pair: '🚀' }),
    });
    await writeEvents(storage, [e]);
    const [read] = (await page({})).events;

    expect(read?.message).toBe('nul\uFFFDhere');
    expect(read?.error).toEqual({ message: 'lone \uFFFD high', kind: 'K\uFFFD', stack: 'at\uFFFDx' });
    expect(read?.attributes).toEqual(attrs({ 'k\uFFFD': 'v\uFFFD', pair: '🚀' }));
  });

  /**
   * Copies a write of `samples` resent metric samples stores: PostgreSQL writes them again and
   * reads them once (migration 012; the merge job removes them later), SQLite skips them.
   */
  const resentCopies = (samples: number) => (storage.kind === 'postgres' ? samples : 0);

  it('stores a batch written three times once', async () => {
    const batch = TYPES.map((t, i) => event(t, { ts: NOW - i }));

    expect((await writeEvents(storage, batch)).inserted).toBe(4);
    expect((await writeEvents(storage, batch)).inserted).toBe(resentCopies(1));
    expect((await writeEvents(storage, batch)).inserted).toBe(resentCopies(1));
    expect((await page({})).events).toHaveLength(4);
  });

  it('counts a duplicate inside one batch once, and an empty batch as nothing', async () => {
    const a = event('log');
    const m = event('metric');

    const result = await writeEvents(storage, [a, m, a, m, a]);
    expect(result.inserted).toBe(2 + resentCopies(1));
    // What went in, per (app, minute, type): the loss map counts the others as duplicates.
    expect(result.storedBy?.map((g) => [g.type, g.count]).sort()).toEqual([
      ['log', 1],
      ['metric', 1 + resentCopies(1)],
    ]);
    expect(await writeEvents(storage, [])).toEqual({ inserted: 0 });
    expect((await page({})).events).toHaveLength(2);
  });

  it('treats the same id at another ts as another event', async () => {
    const a = event('log');
    await writeEvents(storage, [a]);

    expect(await writeEvents(storage, [{ ...a, ts: a.ts + 1 }])).toEqual({ inserted: 1 });
  });

  describe('queryEvents filters', () => {
    const base = NOW - 3_600_000;
    const all = Array.from({ length: 24 }, (_, i) =>
      event(TYPES[i % 4] as EventType, {
        app: i % 2 === 0 ? 'shop' : 'blog',
        name: i % 3 === 0 ? 'b.y' : 'a.x',
        ts: base + i * 1000,
      }),
    );
    const cases: [string, Omit<EventQuery, 'limit'>, (e: TelemetryEvent) => boolean][] = [
      ['none', {}, () => true],
      ['app', { app: 'shop' }, (e) => e.app === 'shop'],
      ...TYPES.map((t): [string, Omit<EventQuery, 'limit'>, (e: TelemetryEvent) => boolean] => [
        `type ${t}`,
        { type: t },
        (e) => e.type === t,
      ]),
      ['name', { name: 'b.y' }, (e) => e.name === 'b.y'],
      ['from', { from: base + 10_000 }, (e) => e.ts >= base + 10_000],
      ['to', { to: base + 10_000 }, (e) => e.ts < base + 10_000],
      [
        'app + type + name + from + to',
        { app: 'shop', type: 'metric', name: 'a.x', from: base + 4000, to: base + 21_000 },
        (e) =>
          e.app === 'shop' &&
          e.type === 'metric' &&
          e.name === 'a.x' &&
          e.ts >= base + 4000 &&
          e.ts < base + 21_000,
      ],
      [
        'app + type error + from',
        { app: 'blog', type: 'error', from: base + 8000 },
        (e) => e.app === 'blog' && e.type === 'error' && e.ts >= base + 8000,
      ],
      ['name + to', { name: 'a.x', to: base + 12_000 }, (e) => e.name === 'a.x' && e.ts < base + 12_000],
      ['unknown app', { app: 'nobody' }, () => false],
    ];

    it.each(cases)('filter: %s', async (_label, query, keep) => {
      await writeEvents(storage, all);
      const expected = all.filter(keep).sort(newestFirst);

      const { events, next } = await page(query);

      expect(events).toEqual(expected);
      expect(next).toBeNull();
    });
  });

  it('takes from inclusive and to exclusive', async () => {
    const from = NOW - 10_000;
    const to = NOW - 5000;
    const batch = [from - 1, from, to - 1, to].flatMap((ts) => [
      event('log', { ts }),
      event('metric', { ts }),
    ]);
    await writeEvents(storage, batch);

    const { events } = await page({ from, to });

    expect(events.map((e) => e.ts).sort((a, b) => a - b)).toEqual([from, from, to - 1, to - 1]);
  });

  async function allPages(query: Omit<EventQuery, 'limit' | 'before'>, limit: number) {
    const pages: TelemetryEvent[][] = [];
    let before: EventQuery['before'];
    for (;;) {
      const result = await storage.queryEvents({ ...query, limit, ...(before ? { before } : {}) });
      pages.push(result.events);
      if (result.next === null) return pages;
      const last = result.events[result.events.length - 1];
      expect(result.next).toEqual({ ts: last?.ts, id: last?.id });
      before = result.next;
    }
  }

  it('pages newest first by (ts, id), every event exactly once, ties on ts broken by id', async () => {
    // Groups of three share a ts, mixing both tables, so ties cross the UNION.
    const batch = Array.from({ length: 25 }, (_, i) =>
      event(TYPES[i % 4] as EventType, { ts: NOW - 100_000 + Math.floor(i / 3) * 1000 }),
    );
    await writeEvents(storage, batch);

    const pages = await allPages({}, 7);

    expect(pages.map((p) => p.length)).toEqual([7, 7, 7, 4]);
    expect(pages.flat().map((e) => e.id)).toEqual([...batch].sort(newestFirst).map((e) => e.id));
  });

  it('ends with an empty page when the last full page was the end', async () => {
    const batch = Array.from({ length: 14 }, (_, i) =>
      event(i % 2 ? 'metric' : 'lifecycle', { ts: NOW - (i % 5) }),
    );
    await writeEvents(storage, batch);

    const pages = await allPages({ app: 'web-shop' }, 7);

    expect(pages.map((p) => p.length)).toEqual([7, 7, 0]);
    expect(new Set(pages.flat().map((e) => e.id)).size).toBe(14);
  });

  it('pages within filters', async () => {
    const batch = Array.from({ length: 20 }, (_, i) =>
      event(i % 2 ? 'metric' : 'error', {
        name: i % 4 < 2 ? 'keep.me' : 'other',
        ts: NOW - Math.floor(i / 4) * 10,
      }),
    );
    await writeEvents(storage, batch);

    const pages = await allPages({ name: 'keep.me' }, 3);

    const expected = batch.filter((e) => e.name === 'keep.me').sort(newestFirst);
    expect(pages.flat().map((e) => e.id)).toEqual(expected.map((e) => e.id));
  });

  it('filters on env, version, attributes and text the same way on every storage', async () => {
    const batch = [
      event('log', {
        env: 'prod',
        version: '1',
        message: 'Cart SAVED',
        attributes: attrs({ n: 1.5, ok: true }),
      }),
      event('error', {
        env: 'prod',
        error: { message: 'card 50% off_ok', kind: 'X', stack: null },
        attributes: attrs({ route: '/a' }),
      }),
      event('metric', {
        env: 'dev',
        version: '1',
        message: 'saved',
        attributes: attrs({ route: '/a', n: 2 }),
      }),
      event('lifecycle', { attributes: attrs({ ok: false, big: 10_000_000_000 }) }),
    ].map((e, i) => ({ ...e, ts: NOW - 1000 + i }));
    await writeEvents(storage, batch);
    const ids = async (q: Omit<EventQuery, 'limit'>) => (await page(q)).events.map((e) => e.id).sort();
    const of = (...i: number[]) => i.map((n) => batch[n]?.id).sort();
    expect(await ids({ env: 'prod' })).toEqual(of(0, 1));
    expect(await ids({ version: '1' })).toEqual(of(0, 2));
    expect(await ids({ attributes: [{ key: 'route', value: '/a' }] })).toEqual(of(1, 2));
    expect(await ids({ attributes: [{ key: 'n', value: '1.5' }] })).toEqual(of(0));
    expect(await ids({ attributes: [{ key: 'ok', value: 'true' }] })).toEqual(of(0));
    expect(await ids({ attributes: [{ key: 'ok', value: 'false' }] })).toEqual(of(3));
    expect(await ids({ attributes: [{ key: 'big', value: '10000000000' }] })).toEqual(of(3));
    expect(
      await ids({
        attributes: [
          { key: 'route', value: '/a' },
          { key: 'n', value: '2' },
        ],
      }),
    ).toEqual(of(2));
    expect(await ids({ text: 'saved' })).toEqual(of(0, 2));
    expect(await ids({ text: '50% off_' })).toEqual(of(1));
    expect(await ids({ text: '5_%' })).toEqual([]);
    expect(await ids({ text: 'saved', type: 'log', version: '1', env: 'prod' })).toEqual(of(0));
  });

  it('reads at most scanLimit rows per table for filters no index serves, and continues below them', async () => {
    // 40 events of two apps in both tables; a filter on env matches one in four.
    const batch = Array.from({ length: 40 }, (_, i) =>
      event(i % 2 ? 'metric' : 'log', {
        app: i % 4 < 2 ? 'a' : 'b',
        env: i % 4 === 0 ? 'x' : 'y',
        ts: NOW - i * 10,
      }),
    );
    await writeEvents(storage, batch);
    const expected = batch.filter((e) => e.env === 'x').sort(newestFirst);
    const seen: TelemetryEvent[] = [];
    let before: EventQuery['before'];
    let pages = 0;
    for (;;) {
      const r = await storage.queryEvents({
        env: 'x',
        limit: 3,
        scanLimit: 4,
        ...(before ? { before } : {}),
      });
      pages++;
      // Each page stops at the newer of both tables' fourth row: a page is never longer than that.
      expect(r.events.length).toBeLessThanOrEqual(3);
      seen.push(...r.events);
      if (r.next === null) break;
      before = r.next;
    }
    expect(seen.map((e) => e.id)).toEqual(expected.map((e) => e.id));
    expect(pages).toBeGreaterThan(expected.length / 3);
    // An indexed filter alone reads as before, unbounded by the scan limit.
    const byName = await storage.queryEvents({ name: batch[0]?.name, limit: 100, scanLimit: 4 });
    expect(byName.events).toHaveLength(20);
  });

  describe('queryMetrics', () => {
    it('reads several stored names together and pages raw points with a cursor', async () => {
      const t = NOW - 60_000;
      const batch = [
        event('metric', { name: 'fps', ts: t + 3, value: 3 }),
        event('metric', {
          name: 'fps_summary',
          ts: t + 1,
          value: null,
          summary: { count: 2, min: 1, max: 2, sum: 3, avg: 1.5 },
        }),
        event('metric', { name: 'fps', ts: t + 2, value: 2 }),
        event('metric', { name: 'fps', ts: t + 2, value: 9 }),
        event('metric', { name: 'other', ts: t + 2, value: 7 }),
      ];
      await writeEvents(storage, batch);
      const all = await storage.queryMetrics({ names: ['fps', 'fps_summary'], resolution: 'raw', limit: 10 });
      expect(all.points.map((p) => [p.ts, p.kind])).toEqual([
        [t + 1, 'summary'],
        [t + 2, 'sample'],
        [t + 2, 'sample'],
        [t + 3, 'sample'],
      ]);
      expect(all.next).toBeNull();
      const sums: number[] = [];
      let after: MetricQuery['after'];
      for (let i = 0; i < 10; i++) {
        const p = await storage.queryMetrics({
          names: ['fps', 'fps_summary'],
          resolution: 'raw',
          limit: 1,
          after,
        });
        sums.push(...p.points.map((x) => x.sum));
        if (p.next === null) break;
        after = p.next;
      }
      expect(sums).toEqual(all.points.map((p) => p.sum));
    });

    const metrics = async (q: Omit<MetricQuery, 'resolution' | 'limit'> & { limit?: number }) =>
      (await storage.queryMetrics({ resolution: 'raw', limit: 1000, ...q })).points;

    it('returns raw samples and summaries oldest first, mapped to points', async () => {
      const t = NOW - 30_000;
      const batch = [
        event('metric', { name: 'latency', ts: t + 2000, value: 7.5 }),
        event('metric', { name: 'latency', ts: t, value: -3 }),
        event('metric', {
          name: 'latency',
          ts: t + 1000,
          app: 'blog',
          value: null,
          summary: { count: 3, min: 1, max: 5, sum: 9, avg: 3 },
        }),
        event('metric', { name: 'other', ts: t + 500, value: 1 }),
        event('log', { name: 'latency', ts: t + 1500 }),
      ];
      await writeEvents(storage, batch);

      expect(await metrics({ names: ['latency'] })).toEqual([
        { ts: t, app: 'web-shop', count: 1, min: -3, max: -3, sum: -3, avg: -3, kind: 'sample' },
        { ts: t + 1000, app: 'blog', count: 3, min: 1, max: 5, sum: 9, avg: 3, kind: 'summary' },
        { ts: t + 2000, app: 'web-shop', count: 1, min: 7.5, max: 7.5, sum: 7.5, avg: 7.5, kind: 'sample' },
      ]);
      expect((await metrics({ names: ['latency'], app: 'blog' })).map((p) => p.ts)).toEqual([t + 1000]);
      expect((await metrics({ names: ['latency'], from: t + 1000, to: t + 2000 })).map((p) => p.ts)).toEqual([
        t + 1000,
      ]);
      expect((await metrics({ names: ['latency'], limit: 2 })).map((p) => p.ts)).toEqual([t, t + 1000]);
      expect(await metrics({ names: ['nothing'] })).toEqual([]);
    });

    it('1m and 1h return no points before any downsample run', async () => {
      for (const resolution of ['1m', '1h'] as const) {
        await expect(storage.queryMetrics({ names: ['latency'], resolution, limit: 10 })).resolves.toEqual({
          points: [],
          next: null,
        });
      }
    });
  });

  it('pings while open; close is idempotent; every call rejects after close', async () => {
    const other = h.open();
    await expect(other.ping()).resolves.toBeUndefined();

    await other.close();
    await other.close();

    await expect(other.ping()).rejects.toThrow();
    await expect(writeEvents(other, [event('log')])).rejects.toThrow();
    await expect(other.queryEvents({ limit: 1 })).rejects.toThrow();
  });
});
