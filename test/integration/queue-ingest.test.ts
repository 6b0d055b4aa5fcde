import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { errorEvent, lifecycle, log, metric, type WireEvent } from '../support/events';
import { getJson, postEvents, waitFor } from '../support/http';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import {
  createTestQueue,
  exactlyOnce,
  metricValue,
  startWorkerProcess,
  type TestQueue,
  type WorkerProcess,
} from './queue-support';

const CLI = path.resolve(__dirname, '../../dist/src/cli.js');

/** Tier 4 end to end: ingest-mode collectors publish, workers write, each event exactly once. */
describe('queue mode (JetStream + PostgreSQL)', () => {
  let db: TestDatabase;
  const queues: TestQueue[] = [];
  const processes: Array<CollectorProcess | WorkerProcess> = [];

  beforeAll(async () => {
    db = await createTestDatabase('queue_ingest');
  });

  afterEach(async () => {
    await Promise.all(processes.splice(0).map((p) => p.stop()));
    await Promise.all(queues.splice(0).map((q) => q.cleanup()));
  });

  afterAll(async () => {
    await db?.drop();
  });

  async function queue(label: string): Promise<TestQueue> {
    const q = await createTestQueue(label);
    queues.push(q);
    return q;
  }

  it('events accepted by two ingest collectors land through two workers, each exactly once', async () => {
    const q = await queue('ingest');
    const collectorEnv = { ...q.env, SLUICE_MODE: 'ingest', SLUICE_DATABASE_URL: db.url };
    const workerEnv = { ...q.env, SLUICE_DATABASE_URL: db.url, SLUICE_WORKER_BATCH_SIZE: '50' };
    const [a, b, w1, w2] = await Promise.all([
      startCollectorProcess(collectorEnv),
      startCollectorProcess(collectorEnv),
      startWorkerProcess(workerEnv),
      startWorkerProcess(workerEnv),
    ]);
    processes.push(a, b, w1, w2);

    const ids: string[] = [];
    const sent: WireEvent[] = [];
    const kinds = [metric, errorEvent, lifecycle, log];
    const send = async (url: string, requests: number) => {
      for (let r = 0; r < requests; r++) {
        const batch: WireEvent[] = Array.from({ length: 100 }, (_, i) => (kinds[i % 4] ?? metric)('qi'));
        const res = await postEvents(url, batch);
        expect(res.status).toBe(202);
        expect(res.body.accepted).toBe(100);
        ids.push(...batch.map((e) => e.id as string));
        sent.push(...batch);
      }
    };
    await Promise.all([send(a.url, 15), send(b.url, 15), send(a.url, 5), send(b.url, 5)]);
    expect(ids).toHaveLength(4000);

    await waitFor(
      'every accepted event stored once',
      async () => (await exactlyOnce(db.url, ids)) === null,
      40_000,
    );
    // Both workers took part: the durable consumers hand each message to one of them. A message
    // carries one request's events of one lane: 40 requests, errors and the rest apart.
    const acked = await Promise.all(
      [w1, w2].map((w) => metricValue(w.url, 'sluice_queue_messages_acked_total')),
    );
    expect(acked[0]).toBeGreaterThan(0);
    expect(acked[1]).toBeGreaterThan(0);
    expect((acked[0] ?? 0) + (acked[1] ?? 0)).toBe(80);
    const stored = await Promise.all([w1, w2].map((w) => metricValue(w.url, 'sluice_events_stored_total')));
    expect((stored[0] ?? 0) + (stored[1] ?? 0)).toBe(4000);
    // Each request's errors went through the error consumer, the rest through the standard one.
    for (const consumer of ['error', 'standard']) {
      const perWorker = await Promise.all(
        [w1, w2].map((w) => metricValue(w.url, 'sluice_queue_messages_acked_total', { consumer })),
      );
      expect((perWorker[0] ?? 0) + (perWorker[1] ?? 0)).toBe(40);
    }
    // The read API of an ingest collector reads what the workers wrote.
    const page = await getJson(`${a.url}/v1/events?app=qi&type=error&limit=5`);
    expect(page.status).toBe(200);
    expect(page.body.events).toHaveLength(5);
    expect(await q.streamMessages()).toBe(0);

    // A retry of an accepted request (same ids, other collector) is dropped by JetStream's
    // duplicate window (Nats-Msg-Id = event id): 202, and nothing reaches the stream.
    const retry = await postEvents(b.url, sent.slice(0, 100));
    expect(retry.status).toBe(202);
    expect(await q.streamMessages()).toBe(0);
    expect(await exactlyOnce(db.url, ids.slice(0, 100))).toBeNull();
  });

  it('a full stream answers 429 with Retry-After; readyz stays 200; room again once a worker drains it', async () => {
    const q = await queue('full');
    const c = await startCollectorProcess({
      ...q.env,
      SLUICE_MODE: 'ingest',
      SLUICE_DATABASE_URL: db.url,
      SLUICE_NATS_MAX_BYTES: '32KiB',
      SLUICE_HEALTH_INTERVAL_MS: '200',
    });
    processes.push(c);
    let full: Awaited<ReturnType<typeof postEvents>> | null = null;
    for (let i = 0; i < 60 && full === null; i++) {
      const res = await postEvents(
        c.url,
        Array.from({ length: 20 }, () => metric('full')),
      );
      if (res.status === 429) full = res;
      else expect(res.status).toBe(202);
    }
    expect(full).not.toBeNull();
    expect(full?.body.error).toBe('queue_full');
    expect(full?.body.throttled?.length).toBeGreaterThan(0);
    expect(Number(full?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await getJson(`${c.url}/readyz`)).status).toBe(200);
    expect(
      await metricValue(c.url, 'sluice_queue_publish_refused_total', { reason: 'stream_full' }),
    ).toBeGreaterThan(0);

    // GET /pipeline of a tier-4 collector: no lanes and no writer in the process, the stream's
    // backlog from the background check, NATS health; storage is the workers' business.
    const backlog = await waitFor('the backlog in /pipeline', async () => {
      const state = (await getJson(`${c.url}/pipeline`)).body;
      return state.queue?.stream_messages > 0 ? state : null;
    });
    expect(backlog).toMatchObject({
      mode: 'ingest',
      lanes: [],
      writer: null,
      queue: { stream_max_bytes: 32 * 1024, drain_messages_per_s: 0 },
      health: { ready: true, storage: 'not_checked', nats: 'up' },
    });
    expect(backlog.queue.stream_bytes).toBeGreaterThan(0);

    const w = await startWorkerProcess({ ...q.env, SLUICE_DATABASE_URL: db.url });
    processes.push(w);
    await waitFor(
      'the stream to take events again',
      async () => (await postEvents(c.url, [metric('full')])).status === 202,
      20_000,
    );
    // …and the rate the workers drain it.
    await waitFor(
      'the workers’ drain rate in /pipeline',
      async () => (await getJson(`${c.url}/pipeline`)).body.queue.drain_messages_per_s > 0,
      10_000,
    );
  });

  it('ingest mode and the worker refuse to start without SLUICE_NATS_URL or SLUICE_DATABASE_URL', () => {
    const run = (args: string[], env: Record<string, string>) =>
      spawnSync(process.execPath, [CLI, ...args], {
        env: { PATH: process.env.PATH ?? '', ...env },
        encoding: 'utf8',
        timeout: 20_000,
      });
    const noNats = run(['serve'], { SLUICE_MODE: 'ingest', SLUICE_DATABASE_URL: 'postgres://x@127.0.0.1/x' });
    expect(noNats.status).toBe(2);
    expect(noNats.stderr).toContain('SLUICE_NATS_URL');
    const noDb = run(['serve'], { SLUICE_MODE: 'ingest', SLUICE_NATS_URL: 'nats://127.0.0.1:4222' });
    expect(noDb.status).toBe(2);
    expect(noDb.stderr).toContain('SLUICE_DATABASE_URL');
    const worker = run(['worker'], { SLUICE_DATABASE_URL: 'postgres://x@127.0.0.1/x' });
    expect(worker.status).toBe(2);
    expect(worker.stderr).toContain('SLUICE_NATS_URL');
    const badUrl = run(['worker'], { SLUICE_NATS_URL: 'http://127.0.0.1:4222' });
    expect(badUrl.status).toBe(2);
    expect(badUrl.stderr).toContain('SLUICE_NATS_URL=');
  });
});
