import fc from 'fast-check';
import pg from 'pg';
import type { TelemetryEvent } from '../../src/events/types';
import { createLogger } from '../../src/log/logger';
import type { OutcomeOrigin } from '../../src/loss-map/outcome';
import { mergeMetricBlocksJob } from '../../src/scheduler/jobs/merge-metric-blocks';
import { createPostgresMaintenanceRunner } from '../../src/storage/postgres';
import { MERGED_BLOCK_SAMPLES, mergeMetricBlocks } from '../../src/storage/postgres/metric-block-merge';
import type { PostgresStorage } from '../../src/storage/postgres';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { openPostgresStorage } from '../support/storage';
import { telemetryEvent } from '../support/telemetry-events';

/**
 * Metric samples without a key row (migration 012): a resent sample is stored again, every read
 * and fold sees each sample once (the first written copy), and the merge job rewrites each group
 * without the copies, correcting the loss map in the same transaction: idempotent, one instance at
 * a time.
 */
const MIN = 60_000;
const logger = createLogger('silent');
/** A minute well inside today's partition, so blocks land in a daily partition. */
const BASE = Math.floor(Date.now() / MIN) * MIN - 30 * MIN;

let db: TestDatabase;
let storage: PostgresStorage;
let client: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase('metric_block_merge');
  storage = openPostgresStorage(db.url);
  await storage.migrate();
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
});

afterAll(async () => {
  await client?.end();
  await storage?.close();
  await db?.drop();
});

beforeEach(async () => {
  await client.query('TRUNCATE metric_blocks, event_outcomes, scheduler_runs, metric_rollup_invalidations');
});

function sample(i: number, over: Partial<TelemetryEvent> = {}): TelemetryEvent {
  return telemetryEvent('metric', {
    app: i % 2 === 0 ? 'app-a' : 'app-b',
    name: 'm.latency',
    ts: BASE + (i % 3) * MIN + i,
    value: i,
    ...over,
  });
}

function write(events: readonly TelemetryEvent[], origin: OutcomeOrigin = 'direct') {
  return storage.writeRows(
    events.map((e) => storage.toRow(e)),
    events.map(() => origin),
  );
}

/** `(id, value)` of every sample `metric_samples` reads, and how often each id comes. */
async function readSamples(): Promise<Map<string, number[]>> {
  const { rows } = await client.query<{ id: string; value: number }>(
    `SELECT id::text AS id, value FROM metric_samples WHERE bucket >= $1 AND bucket < $2`,
    [BASE, BASE + 10 * MIN],
  );
  const byId = new Map<string, number[]>();
  for (const r of rows) byId.set(r.id, [...(byId.get(r.id) ?? []), r.value]);
  return byId;
}

async function storedCopies(): Promise<number> {
  const { rows } = await client.query<{ n: string }>(
    'SELECT coalesce(sum(cardinality(id)), 0) AS n FROM metric_blocks',
  );
  return Number(rows[0]?.n);
}

async function lossMap(): Promise<Record<string, number>> {
  const { rows } = await client.query<{ k: string; n: string }>(
    `SELECT outcome || ':' || origin AS k, sum(count) AS n FROM event_outcomes
      WHERE type = 'metric' GROUP BY 1 ORDER BY 1`,
  );
  return Object.fromEntries(rows.map((r) => [r.k, Number(r.n)]));
}

/** The first written sample of a (minute, app, name) group, as an event to resend. */
async function firstSampleOf(minute: number, app: string, name: string): Promise<TelemetryEvent> {
  const { rows } = await client.query<{ id: string; ts: string; value: number }>(
    `SELECT id::text AS id, ts::text AS ts, value FROM metric_samples
      WHERE bucket = $1 AND app = $2 AND name = $3 ORDER BY ts, id LIMIT 1`,
    [BASE + minute * MIN, app, name],
  );
  const row = rows[0];
  if (row === undefined) throw new Error(`no sample of ${app} ${name} at minute ${minute}`);
  return sample(0, { id: row.id, app, name, ts: Number(row.ts), value: row.value });
}

function runner(instance: string) {
  return createPostgresMaintenanceRunner({
    connectionString: db.url,
    connectTimeoutMs: 5000,
    jobTimeoutMs: 20_000,
    lockTimeoutMs: 5000,
    instance,
    maxConnections: 1,
    logger,
  });
}

/**
 * The rewritten blocks (origin '') of the test's minutes, each as its samples' `(ts, id)` in
 * block order, in (bucket, app, name, first sample) order.
 */
async function rewrittenBlocks(): Promise<Array<Array<[number, string]>>> {
  const { rows } = await client.query<{ ts: string[]; id: string[] }>(
    `SELECT ts::text[] AS ts, id::text[] AS id FROM metric_blocks
      WHERE origin = '' AND bucket >= $1 AND bucket < $2 ORDER BY bucket, app, name, ts[1], id[1]`,
    [BASE, BASE + 10 * MIN],
  );
  return rows.map((r) => r.ts.map((t, i) => [Number(t), r.id[i] as string]));
}

const byTsId = (a: [number, string], b: [number, string]): number =>
  a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);

/** Merges every group of the test's minutes, on the test's client. */
const mergeTestMinutes = () =>
  mergeMetricBlocks(client, {
    beforeMs: BASE + 10 * MIN,
    groupsPerStatement: 10,
    maxGroups: 100,
    correctCounts: true,
  });

/** A job of its own per test: it remembers what its last run saw written. */
const newJob = () => mergeMetricBlocksJob({ resendWindowMs: 0, correctCounts: true });

describe('metric samples without a key row', () => {
  it('a resent sample is read once, the first copy, and the job removes it with its count', async () => {
    const batch = Array.from({ length: 60 }, (_, i) => sample(i));
    await write(batch, 'direct');
    // The SDK's shapes: the second half again, changed (the first copy must win), with newer samples.
    const resent = [...batch.slice(30).map((e) => ({ ...e, value: -1 })), sample(100), sample(101)];
    await write(resent, 'sdk');
    const read = await readSamples();
    expect(read.size).toBe(62);
    for (const e of batch) expect(read.get(e.id)).toEqual([e.value]);
    expect(await storedCopies()).toBe(92);
    expect(await lossMap()).toEqual({ 'stored:': 92 });

    const backend = runner('one');
    const JOB = newJob();
    try {
      const first = await backend.attempt(JOB, 1000);
      expect(first.kind).toBe('ran');
      expect(await storedCopies()).toBe(62);
      expect(await readSamples()).toEqual(read);
      expect(await lossMap()).toEqual({ 'duplicate:sdk': 30, 'stored:': 62 });
      const { rows } = await client.query<{ unmerged: string }>(
        'SELECT count(*) FILTER (WHERE NOT merged) AS unmerged FROM metric_blocks',
      );
      expect(Number(rows[0]?.unmerged)).toBe(0);
      // Idempotent: a second run finds nothing to merge and changes nothing.
      await client.query('TRUNCATE scheduler_runs');
      const again = await backend.attempt(JOB, 1000);
      expect(again.kind === 'ran' && again.outcome.detail).toMatchObject({ groups: 0, duplicates: 0 });
      expect(await lossMap()).toEqual({ 'duplicate:sdk': 30, 'stored:': 62 });
      // A resend after the merge is merged on read, then by the next run.
      await write([{ ...(batch[0] as TelemetryEvent), value: -5 }], 'direct');
      expect((await readSamples()).get(batch[0]!.id)).toEqual([batch[0]!.value]);
      // The next run finds the group written to since its last: left for a run after a quiet interval.
      await client.query('TRUNCATE scheduler_runs');
      await backend.attempt(JOB, 1000);
      expect(await storedCopies()).toBe(63);
      await client.query('TRUNCATE scheduler_runs');
      await backend.attempt(JOB, 1000);
      expect(await storedCopies()).toBe(62);
      expect(await lossMap()).toEqual({ 'duplicate:direct': 1, 'duplicate:sdk': 30, 'stored:': 62 });
    } finally {
      await backend.close();
    }
  });

  it('a group holding no copy is marked merged as it is, unless its blocks are small; one with a copy is rewritten', async () => {
    const oneGroup = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => sample(0, { app: 'app-a', ts: BASE + from + i, value: from + i }));
    const large = [oneGroup(0, 150), oneGroup(150, 150)];
    const small = Array.from({ length: 4 }, (_, w) =>
      oneGroup(0, 20).map((e) => ({ ...e, ts: e.ts + MIN + w * 20, value: 1000 + w })),
    );
    for (const batch of [...large, ...small]) await write(batch);
    const blocks = async () =>
      (
        await client.query<{ bucket: string; seq: string; n: number; merged: boolean }>(
          'SELECT bucket, seq, cardinality(id) AS n, merged FROM metric_blocks ORDER BY bucket, seq',
        )
      ).rows.map((r) => ({ minute: (Number(r.bucket) - BASE) / MIN, seq: r.seq, n: r.n, merged: r.merged }));
    const before = await blocks();
    const read = await readSamples();
    expect(before.map((b) => [b.minute, b.n])).toEqual([
      [0, 150],
      [0, 150],
      [1, 20],
      [1, 20],
      [1, 20],
      [1, 20],
    ]);
    const r = await mergeTestMinutes();
    expect(r).toMatchObject({ groups: 2, rewritten: 1, marked: 2, blocks: 4, written: 1, duplicates: 0 });
    const after = await blocks();
    // Minute 0: the same two blocks, same seq, marked. Minute 1: its four small blocks made one.
    expect(after.filter((b) => b.minute === 0)).toEqual(
      before.filter((b) => b.minute === 0).map((b) => ({ ...b, merged: true })),
    );
    expect(after.filter((b) => b.minute === 1).map((b) => [b.n, b.merged])).toEqual([[80, true]]);
    expect(await readSamples()).toEqual(read);
    expect(await lossMap()).toEqual({ 'stored:': 380 });
    // A copy of a marked group's sample: read once, the first; the group is then rewritten.
    await write([{ ...(large[1]?.[0] as TelemetryEvent), value: -1 }]);
    expect(await readSamples()).toEqual(read);
    const again = await mergeTestMinutes();
    expect(again).toMatchObject({ groups: 1, rewritten: 1, marked: 0, blocks: 3, duplicates: 1 });
    expect(await readSamples()).toEqual(read);
    expect(await storedCopies()).toBe(380);
    expect(await lossMap()).toEqual({ 'duplicate:direct': 1, 'stored:': 380 });
  });

  it('a call over more groups than a statement takes merges each once, whatever the order of their names', async () => {
    // App and metric names that sort differently by bytes and by a language's collation.
    const apps = ['app-B', 'app_a', 'App c', 'äpp', 'z', 'Z-1'];
    const names = ['m.b', 'M.a'];
    let k = 0;
    const group = (minute: number, app: string, name: string, n: number) =>
      Array.from({ length: n }, () => sample(0, { app, name, ts: BASE + minute * MIN + k, value: k++ }));
    const copies: TelemetryEvent[] = [];
    for (const [m, app, name] of [0, 1, 2, 3].flatMap((m) =>
      apps.flatMap((a) => names.map((n) => [m, a, n] as const)),
    )) {
      await write(group(m, app, name, 3));
      // Every third group gets a second small block (rewritten), every fifth a copy of its first sample.
      if (k % 3 === 0) await write(group(m, app, name, 2));
      if (k % 5 === 0) copies.push({ ...(await firstSampleOf(m, app, name)), value: -1 });
    }
    await write(copies, 'sdk');
    const read = await readSamples();
    const stored = await storedCopies();
    const r = await mergeMetricBlocks(client, {
      beforeMs: BASE + 10 * MIN,
      groupsPerStatement: 5,
      maxGroups: 1000,
      correctCounts: true,
    });
    expect(r).toMatchObject({ groups: 48, duplicates: copies.length, caughtUp: true });
    const { rows } = await client.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM metric_blocks WHERE NOT merged',
    );
    expect(rows[0]?.n).toBe(0);
    expect(await readSamples()).toEqual(read);
    expect(await storedCopies()).toBe(stored - copies.length);
    expect(await lossMap()).toEqual({ 'duplicate:sdk': copies.length, 'stored:': stored - copies.length });
  });

  it('a rewritten group comes out in (ts, id) order, in blocks of at most MERGED_BLOCK_SAMPLES', async () => {
    // One group of 2,500 samples written in three shuffled batches, then one copy: rewritten.
    const group = Array.from({ length: 2500 }, (_, i) =>
      sample(0, { app: 'app-a', ts: BASE + ((i * 7919) % 50_000), value: i }),
    );
    const shuffled = [...group].sort((a, b) => (a.id < b.id ? -1 : 1));
    for (const part of [shuffled.slice(0, 900), shuffled.slice(900, 1700), shuffled.slice(1700)]) {
      await write(part);
    }
    await write([{ ...(group[0] as TelemetryEvent), value: -1 }]);
    const read = await readSamples();
    expect(await mergeTestMinutes()).toMatchObject({ groups: 1, rewritten: 1, duplicates: 1 });
    const blocks = await rewrittenBlocks();
    expect(blocks.map((b) => b.length)).toEqual([MERGED_BLOCK_SAMPLES, 2500 - MERGED_BLOCK_SAMPLES]);
    const all = blocks.flat();
    expect(all).toEqual([...all].sort(byTsId));
    expect(await readSamples()).toEqual(read);
  });

  it('two instances at once: one rewrites, the other finds the lock busy or the window claimed', async () => {
    const batch = Array.from({ length: 40 }, (_, i) => sample(i));
    await write(batch);
    await write(batch);
    const a = runner('a');
    const b = runner('b');
    const JOB = newJob();
    try {
      const results = await Promise.all([a.attempt(JOB, 60_000), b.attempt(JOB, 60_000)]);
      expect(results.filter((r) => r.kind === 'ran')).toHaveLength(1);
      expect(await storedCopies()).toBe(40);
      expect(await lossMap()).toEqual({ 'duplicate:direct': 40, 'stored:': 40 });
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('reads and folds over blocks with injected copies see each sample once, the first written', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.nat({ max: 29 }), { maxLength: 25 }), { minLength: 1, maxLength: 5 }),
        fc.boolean(),
        async (writes, mergeFirst) => {
          await client.query('TRUNCATE metric_blocks, event_outcomes, metric_rollup_invalidations');
          const pool = Array.from({ length: 30 }, (_, i) => sample(i));
          // Each write sends some samples of the pool; the value tells which write it came from.
          const firstValue = new Map<string, number>();
          for (let w = 0; w < writes.length; w++) {
            const picked = (writes[w] ?? []).map((i) => ({
              ...(pool[i] as TelemetryEvent),
              value: w * 100 + i,
            }));
            for (const e of picked) if (!firstValue.has(e.id)) firstValue.set(e.id, e.value as number);
            if (picked.length > 0) await write(picked);
            // A merged group with copies written after it.
            if (mergeFirst && w === 0) {
              await mergeTestMinutes();
            }
          }
          const read = await readSamples();
          expect(read.size).toBe(firstValue.size);
          for (const [id, v] of firstValue) expect(read.get(id)).toEqual([v]);
          // The fold's source: per (app, minute) the count and sum of distinct samples.
          const { rows } = await client.query<{ app: string; bucket: string; n: string; s: number }>(
            `SELECT app, bucket, count(*) AS n, sum(value) AS s FROM metric_sample_values
              WHERE name = 'm.latency' AND bucket >= $1 AND bucket < $2 GROUP BY 1, 2 ORDER BY 1, 2`,
            [BASE, BASE + 10 * MIN],
          );
          const expected = new Map<string, { n: number; s: number }>();
          for (const e of pool) {
            const v = firstValue.get(e.id);
            if (v === undefined) continue;
            const key = `${e.app} ${e.ts - (e.ts % MIN)}`;
            const g = expected.get(key) ?? { n: 0, s: 0 };
            expected.set(key, { n: g.n + 1, s: g.s + v });
          }
          expect(new Map(rows.map((r) => [`${r.app} ${r.bucket}`, { n: Number(r.n), s: r.s }]))).toEqual(
            expected,
          );
          // Merged (groups rewritten or marked), the same samples are read, each stored once.
          await mergeTestMinutes();
          for (const block of await rewrittenBlocks()) expect(block).toEqual([...block].sort(byTsId));
          const merged = await readSamples();
          expect(merged.size).toBe(firstValue.size);
          for (const [id, v] of firstValue) expect(merged.get(id)).toEqual([v]);
          expect(await storedCopies()).toBe(firstValue.size);
        },
      ),
      { numRuns: 25 },
    );
  });
});
