import crypto from 'node:crypto';
import pg from 'pg';
import { Registry } from 'prom-client';
import { createScheduler, type SchedulerHandle } from '../../src/compose/scheduler';
import { loadConfig } from '../../src/config/load';
import { createLogger } from '../../src/log/logger';
import { createSchedulerMetrics } from '../../src/metrics/scheduler-instruments';
import { schedulerConfigFrom } from '../../src/scheduler';
import type { PostgresStorage } from '../../src/storage/postgres';
import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { metric } from '../support/events';
import { postEvents, waitFor } from '../support/http';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { openPostgresStorage } from '../support/storage';
import {
  createTestQueue,
  exactlyOnce,
  startWorkerProcess,
  type TestQueue,
  type WorkerProcess,
} from './queue-support';

/**
 * Tier 4: samples wait in the JetStream stream while no worker runs, and reach PostgreSQL ten
 * minutes after their ts, long after the downsample job last ran. The next run folds them.
 */

const MIN = 60_000;
const logger = createLogger('silent');

let db: TestDatabase;
let q: TestQueue;
let storage: PostgresStorage;
let admin: pg.Client;
let scheduler: SchedulerHandle | null = null;
const processes: Array<CollectorProcess | WorkerProcess> = [];

beforeAll(async () => {
  db = await createTestDatabase('queue_backlog');
  q = await createTestQueue('backlog');
  storage = openPostgresStorage(db.url, { poolSize: 1 });
  await storage.migrate();
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
});

afterAll(async () => {
  await scheduler?.close();
  await Promise.all(processes.map((p) => p.stop()));
  await q?.cleanup();
  await storage?.close();
  await admin?.end();
  await db?.drop();
});

async function downsampleRuns(): Promise<number> {
  const { rows } = await admin.query<{ n: string }>(
    `SELECT count(*) AS n FROM scheduler_runs WHERE job = 'downsample' AND error IS NULL AND finished_ms IS NOT NULL`,
  );
  return Number(rows[0]?.n ?? 0);
}

it('a stream backlog drained 10 minutes late is in the 1m and 1h rollups after the next run', async () => {
  const config = loadConfig({
    SLUICE_DATABASE_URL: db.url,
    SLUICE_JOB_DOWNSAMPLE_INTERVAL_MS: '500',
    SLUICE_JOB_PURGE_INTERVAL_MS: '0',
    SLUICE_JOB_PARTITIONS_INTERVAL_MS: '0',
    SLUICE_JOB_COMPACT_OUTCOMES_INTERVAL_MS: '0',
  });
  scheduler = createScheduler({
    storage: { kind: 'postgres', connectionString: db.url },
    config: schedulerConfigFrom(config),
    clock: { now: () => Date.now() },
    logger,
    metrics: createSchedulerMetrics(new Registry()),
  });
  scheduler.start();
  await waitFor('a first downsample run', async () => (await downsampleRuns()) >= 1, 15_000);

  // Accepted by an ingest collector while no worker runs: the backlog waits in the stream.
  const collector = await startCollectorProcess({
    ...q.env,
    SLUICE_MODE: 'ingest',
    SLUICE_DATABASE_URL: db.url,
  });
  processes.push(collector);
  const name = `backlog.${crypto.randomBytes(4).toString('hex')}`;
  const stampedAt = Date.now() - 10 * MIN;
  const events = Array.from({ length: 120 }, (_, i) =>
    metric('queue-app', { name, ts: stampedAt + i * 500, value: (i % 17) / 4 }),
  );
  expect((await postEvents(collector.url, events)).status).toBe(202);
  const runsBefore = await downsampleRuns();
  await waitFor(
    'a downsample run while the backlog waits',
    async () => (await downsampleRuns()) > runsBefore,
  );
  expect((await storage.queryMetrics({ names: [name], resolution: '1m', limit: 100 })).points).toEqual([]);

  // The worker drains the backlog ten minutes after the events' ts.
  processes.push(await startWorkerProcess({ ...q.env, SLUICE_DATABASE_URL: db.url }));
  const ids = events.map((e) => e.id as string);
  await waitFor(
    'every event stored exactly once',
    async () => (await exactlyOnce(db.url, ids)) === null,
    20_000,
  );

  for (const [resolution, width] of [
    ['1m', MIN],
    ['1h', 60 * MIN],
  ] as const) {
    const expected = new Map<number, { count: number; sum: number; min: number; max: number }>();
    for (const e of events) {
      const bucket = Math.floor((e.ts as number) / width) * width;
      const v = e.value as number;
      const b = expected.get(bucket) ?? { count: 0, sum: 0, min: v, max: v };
      expected.set(bucket, {
        count: b.count + 1,
        sum: b.sum + v,
        min: Math.min(b.min, v),
        max: Math.max(b.max, v),
      });
    }
    const want = [...expected.entries()]
      .sort(([a], [b]) => a - b)
      .map(([ts, b]) => ({ ts, app: 'queue-app', ...b, avg: b.sum / b.count }));
    await waitFor(
      `${resolution} rollups of the drained backlog`,
      async () =>
        JSON.stringify((await storage.queryMetrics({ names: [name], resolution, limit: 100 })).points) ===
        JSON.stringify(
          want.map((p) => ({
            ts: p.ts,
            app: p.app,
            count: p.count,
            min: p.min,
            max: p.max,
            sum: p.sum,
            avg: p.avg,
          })),
        ),
      15_000,
    );
  }
});
