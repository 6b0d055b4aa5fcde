import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { TelemetryEvent } from '../../src/events/types';
import { createLogger } from '../../src/log/logger';
import type { Job } from '../../src/scheduler/job';
import { downsampleJob } from '../../src/scheduler/jobs/downsample';
import { purgeJob } from '../../src/scheduler/jobs/purge';
import { createPostgresMaintenanceRunner } from '../../src/storage/postgres';
import type { AttemptResult, RunBackend } from '../../src/scheduler/run-backend';
import { createSqliteMaintenanceRunner, createSqliteStorage } from '../../src/storage/sqlite';
import type { MetricPoint, Storage } from '../../src/storage/port';
import { createTestDatabase, tempSqlitePath } from '../support/postgres';
import { openPostgresStorage, writeEvents } from '../support/storage';
import { telemetryEvent } from '../support/telemetry-events';

const SEC = 1000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
/** 09:47:13 UTC. */
const T0 = Date.UTC(2026, 11, 2, 9, 47, 13);
/** Raw retention of the history written (the storage's is 2 days, so every sample is kept). */
const RETENTION_RAW = 36 * HOUR;
/** Short, so part of the raw history is older than the 1m retention. */
const RETENTION_1M = 12 * HOUR;
const INTERVAL = SEC;
/** Warnings of the runs, one JSON line each. */
const logLines: string[] = [];
const logger = createLogger('warn', { write: (line: string) => void logLines.push(line) });

interface Bucket {
  name: string;
  bucket: number;
  app: string;
  count: number;
  min: number;
  max: number;
  sum: number;
}
type Dump = Record<'1m' | '1h', Bucket[]>;

interface Harness {
  readonly storage: Storage;
  /** One attempt of `job` with the database clock at `now`. */
  attempt(job: Job, now: number): Promise<AttemptResult>;
  dump(): Promise<Dump>;
  dispose(): Promise<void>;
}

const ORDER = (a: Bucket, b: Bucket) =>
  a.name.localeCompare(b.name) || a.bucket - b.bucket || a.app.localeCompare(b.app);

async function postgresHarness(): Promise<Harness> {
  const db = await createTestDatabase('sched_downsample');
  let now = T0;
  const storage = openPostgresStorage(db.url, { retentionRawMs: 2 * DAY, clock: { now: () => T0 } });
  await storage.migrate();
  const backend: RunBackend = createPostgresMaintenanceRunner({
    connectionString: db.url,
    connectTimeoutMs: 5000,
    jobTimeoutMs: 30_000,
    lockTimeoutMs: 1000,
    instance: 'test',
    maxConnections: 1,
    databaseClock: { now: () => now },
    logger,
  });
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  const table = async (t: string): Promise<Bucket[]> =>
    (await admin.query(`SELECT name, bucket, app, count, min, max, sum FROM ${t}`)).rows
      .map((r) => ({ ...r, bucket: Number(r.bucket), count: Number(r.count) }))
      .sort(ORDER);
  return {
    storage,
    attempt: (job, at) => {
      now = at;
      return backend.attempt(job, INTERVAL);
    },
    dump: async () => ({ '1m': await table('metric_rollups_1m'), '1h': await table('metric_rollups_1h') }),
    dispose: async () => {
      await backend.close();
      await storage.close();
      await admin.end();
      await db.drop();
    },
  };
}

async function sqliteHarness(): Promise<Harness> {
  const file = tempSqlitePath('sched_downsample');
  let now = T0;
  const storage = createSqliteStorage({ path: file, clock: { now: () => T0 }, logger });
  await storage.migrate();
  const backend = createSqliteMaintenanceRunner({
    maintenance: storage.maintenance,
    instance: 'test',
    clock: { now: () => now },
    logger,
  });
  const admin = new Database(file, { readonly: true });
  const table = (t: string): Bucket[] =>
    (admin.prepare(`SELECT name, bucket, app, count, min, max, sum FROM ${t}`).all() as Bucket[]).sort(ORDER);
  return {
    storage,
    attempt: (job, at) => {
      now = at;
      return backend.attempt(job, INTERVAL);
    },
    dump: async () => ({ '1m': table('metric_rollups_1m'), '1h': table('metric_rollups_1h') }),
    dispose: async () => {
      admin.close();
      await storage.close();
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    },
  };
}

/** Deterministic PRNG (mulberry32), so a failure can be replayed from the printed seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const APPS = ['web-shop', 'blog'];
const NAMES = ['render.frame_drop', 'api.latency'];
const SUMMARY_NAME = 'render.frame_drop_summary';

/** Random metric events; values are multiples of 1/4, so every sum is exact in float64 whatever the order. */
function generator(random: () => number) {
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[int(0, xs.length - 1)] as T;
  return (ts: number): TelemetryEvent => {
    const app = pick(APPS);
    if (random() < 0.3) {
      const count = int(1, 20);
      const min = int(-400, 400) / 4;
      const max = min + int(0, 400) / 4;
      const sum = count * min + int(0, count * (max - min) * 4) / 4;
      const name = random() < 0.5 ? SUMMARY_NAME : pick(NAMES);
      const summary = { count, min, max, sum, avg: sum / count };
      return telemetryEvent('metric', { name, ts, app, value: null, summary });
    }
    return telemetryEvent('metric', { name: pick(NAMES), ts, app, value: int(-4000, 4000) / 4 });
  };
}

/** The brute force: every stored event folded straight into 1m and 1h buckets. */
function bruteForce(events: readonly TelemetryEvent[]): Dump {
  const fold = (width: number): Bucket[] => {
    const out = new Map<string, Bucket>();
    for (const e of events) {
      const bucket = Math.floor(e.ts / width) * width;
      const key = `${e.name}\u0000${bucket}\u0000${e.app}`;
      const s = e.summary ?? { count: 1, min: e.value!, max: e.value!, sum: e.value! };
      const b = out.get(key);
      if (b === undefined) out.set(key, { name: e.name, bucket, app: e.app, ...pickFigures(s) });
      else {
        b.count += s.count;
        b.min = Math.min(b.min, s.min);
        b.max = Math.max(b.max, s.max);
        b.sum += s.sum;
      }
    }
    return [...out.values()].sort(ORDER);
  };
  return { '1m': fold(MIN), '1h': fold(HOUR) };
}

function pickFigures(s: { count: number; min: number; max: number; sum: number }) {
  return { count: s.count, min: s.min, max: s.max, sum: s.sum };
}

function asPoints(buckets: readonly Bucket[], name: string, app?: string): MetricPoint[] {
  return buckets
    .filter((b) => b.name === name && (app === undefined || b.app === app))
    .map((b) => ({
      ts: b.bucket,
      app: b.app,
      count: b.count,
      min: b.min,
      max: b.max,
      sum: b.sum,
      avg: b.sum / b.count,
    }));
}

describe.each([
  ['postgres', postgresHarness],
  ['sqlite', sqliteHarness],
])('downsample on %s', (_kind, makeHarness) => {
  let h: Harness;
  beforeAll(async () => {
    h = await makeHarness();
  });
  afterAll(() => h?.dispose());

  /** Every distinct (id, ts) stored so far: what the raw tables hold. */
  const stored = new Map<string, TelemetryEvent>();
  const write = async (batch: TelemetryEvent[]) => {
    await writeEvents(h.storage, batch);
    for (const e of batch) stored.set(`${e.id}/${e.ts}`, e);
  };

  it('after any writes (random ages, resends, duplicates, writes racing a run) one run makes every rollup equal a brute-force fold; a second run changes nothing', async () => {
    const seed = Number(process.env.TEST_SEED ?? crypto.randomInt(2 ** 31));
    const random = prng(seed);
    const next = generator(random);
    // Small folds, so a run takes the log in many steps.
    const job = downsampleJob({ retention1mMs: RETENTION_1M, maxEntriesPerFold: 40, maxFoldsPerRun: 1000 });
    const context = `seed ${seed} (replay with TEST_SEED=${seed})`;
    const resends = (n: number) =>
      Array.from({ length: n }, () => {
        const all = [...stored.values()];
        return all[Math.floor(random() * all.length)] as TelemetryEvent;
      });

    let now = T0;
    // History across the whole raw retention, with exact minute and hour edges and the millisecond before them.
    const history = Array.from({ length: 600 }, () => next(now - Math.floor(random() * RETENTION_RAW)));
    for (const edge of [10 * HOUR, 10 * HOUR + 17 * MIN, 11 * HOUR, 11 * HOUR + 30 * MIN]) {
      const at = Date.UTC(2026, 11, 2) + edge - DAY;
      history.push(next(at), next(at - 1), next(at + 1));
    }
    await write(history);

    for (let round = 0; round < 6; round++) {
      now += 20 * SEC + Math.floor(random() * 40 * SEC);
      // Any age inside raw retention (a backlog drained late, an SDK's offline buffer), a little
      // in the future, resends of stored events, and duplicates inside one batch.
      const fresh = Array.from({ length: 60 }, () =>
        next(now - Math.floor(random() ** 3 * RETENTION_RAW) + Math.floor(random() * 30 * SEC)),
      );
      const twice = fresh.slice(0, 5);
      await write([...fresh, ...twice, ...resends(10)]);
      // A write racing a run: committed before, during or after its fold; either way the next
      // run must see it.
      const racing = [
        ...Array.from({ length: 30 }, () => next(now - Math.floor(random() * 6 * HOUR))),
        ...resends(5),
      ];
      const [r] = await Promise.all([h.attempt(job, now), write(racing)]);
      expect({ context, kind: r.kind }).toEqual({ context, kind: 'ran' });

      const after = await h.attempt(job, now + SEC);
      expect({ context, kind: after.kind }).toEqual({ context, kind: 'ran' });
      expect({ context, dump: await h.dump() }).toEqual({ context, dump: bruteForce([...stored.values()]) });
      now += SEC;
    }

    const before = await h.dump();
    const again = await h.attempt(job, now + SEC);
    expect(again.kind === 'ran' && again.outcome.rows).toBe(0);
    expect(await h.dump()).toEqual(before);

    // GET /v1/metrics?resolution=1m|1h serves the rollups: bucket start as ts, avg = sum / count.
    const expected = bruteForce([...stored.values()]);
    for (const [resolution, name, app] of [
      ['1m', 'api.latency', 'blog'],
      ['1m', SUMMARY_NAME, undefined],
      ['1h', 'render.frame_drop', undefined],
    ] as const) {
      const { points } = await h.storage.queryMetrics({ names: [name], app, resolution, limit: 10_000 });
      expect(points).toEqual(asPoints(expected[resolution], name, app));
    }
  });

  it('reads a metric with its summaries at 1m and 1h, merged per bucket and paged; lists its app and series', async () => {
    const minute = Math.floor((T0 - 30 * MIN) / MIN) * MIN;
    const at = (ms: number, over: Partial<TelemetryEvent>): TelemetryEvent => ({
      ...generator(prng(11))(ms),
      app: 'merge-app',
      version: null,
      env: null,
      message: null,
      error: null,
      ...over,
    });
    await write([
      at(minute + 1000, { name: 'fps', value: 4, summary: null }),
      at(minute + 2000, {
        name: 'fps_summary',
        value: null,
        summary: { count: 3, min: 1, max: 9, sum: 12, avg: 4 },
      }),
      at(minute + MIN + 5, { name: 'fps', value: 7, summary: null }),
    ]);
    // Found through the invalidation log before any run, with each series' kind.
    const window = { from: minute - HOUR, to: T0 };
    const list = { ...window, app: 'merge-app', limit: 10, scanLimit: 40, appsPerName: 10, rowsPerName: 100 };
    expect((await h.storage.queryMetricNames(list)).names).toEqual([
      { name: 'fps', kind: 'sample', apps: ['merge-app'], appsCapped: false },
      { name: 'fps_summary', kind: 'summary', apps: ['merge-app'], appsCapped: false },
    ]);
    // A window of the job no other test claimed.
    expect((await h.attempt(downsampleJob({ retention1mMs: RETENTION_1M }), T0 + 20 * MIN)).kind).toBe('ran');
    const names = ['fps', 'fps_summary'];
    const read = (resolution: '1m' | '1h', limit: number, after?: { ts: number; key: string }) =>
      h.storage.queryMetrics({ names, app: 'merge-app', resolution, limit, after });
    const minutes = await read('1m', 10);
    expect(minutes.points).toEqual([
      { ts: minute, app: 'merge-app', count: 4, min: 1, max: 9, sum: 16, avg: 4 },
      { ts: minute + MIN, app: 'merge-app', count: 1, min: 7, max: 7, sum: 7, avg: 7 },
    ]);
    const first = await read('1m', 1);
    expect(first.points).toEqual(minutes.points.slice(0, 1));
    expect(first.next).toEqual({ ts: minute, key: 'merge-app' });
    expect(await read('1m', 1, first.next ?? undefined)).toEqual({
      points: minutes.points.slice(1),
      next: null,
    });
    expect((await read('1h', 10)).points).toEqual([
      {
        ts: Math.floor(minute / HOUR) * HOUR,
        app: 'merge-app',
        count: 5,
        min: 1,
        max: 9,
        sum: 23,
        avg: 23 / 5,
      },
    ]);
    // Still listed once folded (the log is empty now), with its samples counted from the 1h rollups.
    expect((await h.storage.queryMetricNames(list)).names).toHaveLength(2);
    const apps = await h.storage.queryApps({
      ...window,
      countLimit: 10,
      sampleRowsLimit: 100,
      limit: 100,
      scanLimit: 400,
    });
    expect(apps.apps.find((a) => a.app === 'merge-app')).toEqual({
      app: 'merge-app',
      lastEventTs: null,
      events: 0,
      eventsCapped: false,
      lastMetricMinute: minute + MIN,
      metricSamples: 5,
      metricSamplesCapped: false,
    });
  });

  it('a sample older than the 1m retention still reaches its 1h bucket, whose 1m rows are purged', async () => {
    const now = T0 + HOUR;
    const hour = Math.floor((now - RETENTION_1M - 3 * HOUR) / HOUR) * HOUR;
    const gen = generator(prng(7));
    const early = Array.from({ length: 20 }, (_, i) => ({
      ...gen(hour + i * MIN),
      name: 'old.series',
      app: 'blog',
    }));
    await write(early);
    expect((await h.attempt(downsampleJob({ retention1mMs: RETENTION_1M }), now)).kind).toBe('ran');
    const purge = purgeJob({
      retentionRawMs: RETENTION_RAW,
      retention1mMs: RETENTION_1M,
      retention1hMs: 400 * DAY,
      limits: { batchSize: 1000, maxRows: 100_000 },
    });
    expect((await h.attempt(purge, now + SEC)).kind).toBe('ran');
    const oldMinutes = (await h.dump())['1m'].filter((b) => b.name === 'old.series');
    expect(oldMinutes).toEqual([]);

    const late = { ...gen(hour + 30 * MIN + 5), name: 'old.series', app: 'blog' };
    await write([late]);
    expect((await h.attempt(downsampleJob({ retention1mMs: RETENTION_1M }), now + 2 * SEC)).kind).toBe('ran');
    const hourRow = (await h.dump())['1h'].filter((b) => b.name === 'old.series');
    expect(hourRow).toEqual(bruteForce([...early, late])['1h']);
  });

  it('a bucket whose sum leaves the double range folds to ±Infinity; one that cannot be folded is skipped, counted and logged once; the others fold', async () => {
    const now = T0 + 3 * HOUR;
    const minute = Math.floor((now - 30 * MIN) / MIN) * MIN;
    const event = (name: string, app: string, figures: Partial<TelemetryEvent>): TelemetryEvent => ({
      id: crypto.randomUUID(),
      type: 'metric',
      name,
      ts: minute + 1000,
      app,
      version: null,
      env: null,
      error: null,
      message: null,
      attributes: Object.create(null),
      value: null,
      summary: null,
      ...figures,
    });
    // Values no collector takes any more (past ±1e300), as an older one stored them, and the
    // largest count the wire takes 1,025 times in one minute: its sum does not fit a bigint.
    const huge = [1.7e308, 1.7e308].map((value) => event('edge.huge', 'up', { value }));
    const negative = [-1.7e308, -1.7e308].map((value) => event('edge.huge', 'down', { value }));
    const count = Number.MAX_SAFE_INTEGER;
    const counted = Array.from({ length: 1025 }, () =>
      event('edge.count', 'many', { summary: { count, min: 1, max: 1, sum: count, avg: 1 } }),
    );
    const normal = [event('edge.normal', 'other', { value: 5 })];
    // Finite in each stored name; past a double once the read merges a metric and its summaries.
    const top = { count: 1, min: 1.7e308, max: 1.7e308, sum: 1.7e308, avg: 1.7e308 };
    const pair = [
      event('edge.pair', 'solo', { value: 1.7e308 }),
      event('edge.pair_summary', 'solo', { summary: top }),
    ];
    await write([...huge, ...negative, ...counted, ...normal, ...pair]);
    logLines.length = 0;

    const r = await h.attempt(downsampleJob({ retention1mMs: RETENTION_1M }), now);
    expect(r.kind === 'ran' ? r.outcome.skipped : r).toBe(1);
    const edges = (buckets: Bucket[]) => buckets.filter((b) => b.name.startsWith('edge.'));
    const hour = Math.floor(minute / HOUR) * HOUR;
    const figures = (bucket: number) => [
      { name: 'edge.huge', bucket, app: 'down', count: 2, min: -1.7e308, max: -1.7e308, sum: -Infinity },
      { name: 'edge.huge', bucket, app: 'up', count: 2, min: 1.7e308, max: 1.7e308, sum: Infinity },
      { name: 'edge.normal', bucket, app: 'other', count: 1, min: 5, max: 5, sum: 5 },
      { name: 'edge.pair', bucket, app: 'solo', count: 1, min: 1.7e308, max: 1.7e308, sum: 1.7e308 },
      { name: 'edge.pair_summary', bucket, app: 'solo', count: 1, min: 1.7e308, max: 1.7e308, sum: 1.7e308 },
    ];
    const dump = await h.dump();
    expect({ '1m': edges(dump['1m']), '1h': edges(dump['1h']) }).toEqual({
      '1m': figures(minute),
      '1h': figures(hour),
    });
    const read = async (names: string[], app: string) =>
      (await h.storage.queryMetrics({ names, app, resolution: '1m', limit: 10 })).points;
    const infinite = { ts: minute, count: 2, min: 1.7e308, max: 1.7e308, sum: Infinity, avg: Infinity };
    expect(await read(['edge.huge'], 'up')).toEqual([{ ...infinite, app: 'up' }]);
    expect(await read(['edge.pair', 'edge.pair_summary'], 'solo')).toEqual([{ ...infinite, app: 'solo' }]);
    const skipped = logLines.filter((l) => l.includes('edge.count'));
    expect(skipped).toHaveLength(1);
    expect(JSON.parse(skipped[0] as string)).toMatchObject({
      level: 'warn',
      skipped: 1,
      buckets: [{ name: 'edge.count', app: 'many', bucket: minute }],
    });

    // Skipped once: the bucket's log entry went with the fold, so the next run neither fails nor logs.
    const again = await h.attempt(downsampleJob({ retention1mMs: RETENTION_1M }), now + SEC);
    expect(again.kind === 'ran' ? again.outcome.skipped : again).toBe(0);
    expect(logLines.filter((l) => l.includes('edge.count'))).toHaveLength(1);
    expect(await h.dump()).toEqual(dump);
  });
});
