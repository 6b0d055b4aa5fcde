/**
 * The loss map end to end beyond one collector, with the defaults a user gets (rate limit 100
 * events/s, shedding on): tier 4, a worker killed (kill -9) holding an unacked batch mid-write; and
 * tier 3, three collectors sharing PostgreSQL and Redis limits, an SDK on each. After the SDKs'
 * flush and the pipeline's drain, the identity holds exactly for the window, nothing is pending and
 * `stored` equals the rows in the database. Build first: `npm run build` (`npm test` does).
 */
import { createClient, type Client } from '../../sdk/src';
import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { waitFor } from '../support/http';
import {
  rowsOfApp,
  settledLossMap,
  totalLosses,
  type LossMapAnswer,
  type StorageAt,
} from '../support/loss-map';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { redisUrl, uniquePrefix } from '../support/redis';
import { TcpProxy } from '../support/tcp-proxy';
import {
  createTestQueue,
  metricValue,
  startWorkerProcess,
  type TestQueue,
  type WorkerProcess,
} from './queue-support';

jest.setTimeout(120_000);

function sdk(endpoint: string, app: string): Client {
  return createClient({ endpoint, app, buffer: { maxEvents: 150 }, flushIntervalMs: 50, onError: () => {} });
}

/** Offers `n` rounds of logs, lifecycle events, errors and invalid captures; returns the invalid ones. */
function capture(client: Client, n: number): number {
  let invalid = 0;
  for (let i = 0; i < n; i++) {
    client.log('cart.updated', `item ${i}`);
    if (i % 10 === 0) client.lifecycle('checkout.step');
    if (i % 50 === 0) client.error(new Error(`failure ${i}`));
    if (i % 40 === 0) {
      client.metric('render.frame_drop', Number.NaN);
      invalid++;
    }
  }
  return invalid;
}

/** The map against what the SDKs themselves counted, and the identity. */
function expectExact(m: LossMapAnswer, clients: readonly Client[], invalid: number): void {
  const stats = clients.map((c) => c.stats());
  const sum = (f: (s: (typeof stats)[number]) => number) => stats.reduce((n, s) => n + f(s), 0);
  expect(m.pending).toEqual({ sdk: 0, pipeline: 0 });
  expect(m.generated).toBe(sum((s) => s.captured + s.dropped.sampled + s.dropped.invalid));
  expect(m.stored).toBe(sum((s) => s.sent));
  expect(m.losses.sdk?.invalid).toBe(invalid);
  expect(m.losses.sdk?.buffer_full ?? 0).toBe(sum((s) => s.dropped.buffer_full));
  expect(m.losses.sdk?.sampled ?? 0).toBe(sum((s) => s.dropped.sampled));
  expect(m.generated).toBe(m.stored + totalLosses(m) + m.pending.sdk + m.pending.pipeline);
}

describe('loss map end to end beyond one collector (defaults)', () => {
  let db: TestDatabase;
  const processes: Array<CollectorProcess | WorkerProcess> = [];
  const queues: TestQueue[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('loss_map_cluster');
  });

  afterEach(async () => {
    await Promise.all(processes.splice(0).map((p) => p.stop()));
    await Promise.all(queues.splice(0).map((q) => q.cleanup()));
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('tier 4: a worker killed mid-batch; its batch is delivered again and counted once', async () => {
    const app = `lossmap-t4-${process.pid}`;
    const at: StorageAt = { kind: 'postgres', url: db.url };
    const q = await createTestQueue('lossmap');
    queues.push(q);
    const target = new URL(db.url);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.start();
    const viaProxy = new URL(db.url);
    viaProxy.port = String(proxy.port);
    const workerEnv = { ...q.env, SLUICE_WORKER_ACK_WAIT: '2s' };
    try {
      // Until worker A has migrated, the collector's loss-map writes fail and are kept for the next.
      const c = await startCollectorProcess(
        { ...q.env, SLUICE_MODE: 'ingest', SLUICE_DATABASE_URL: db.url },
        { defaults: 'user' },
      );
      processes.push(c);
      const a = await startWorkerProcess({ ...workerEnv, SLUICE_DATABASE_URL: viaProxy.toString() });
      processes.push(a);
      const client = sdk(`${c.url}/v1/events`, app);
      let invalid = capture(client, 150);
      // Worker A stores the first events before its database connection is cut.
      await waitFor('worker A storing events', async () => (await rowsOfApp(at, app)) > 0, 20_000);

      // Worker A's next batch hangs in its write, unacked, when it is killed.
      proxy.cut();
      invalid += capture(client, 150);
      const consumer = `${q.stream}_standard`;
      await waitFor(
        'worker A holding an unacked batch',
        async () => (await q.jsm.consumers.info(q.stream, consumer)).num_ack_pending > 0,
        15_000,
      );
      await a.kill();
      const b = await startWorkerProcess({ ...workerEnv, SLUICE_DATABASE_URL: db.url });
      processes.push(b);
      invalid += capture(client, 50);
      await client.flush({ timeoutMs: 60_000 });

      const m = await settledLossMap(c.url, app, at, 45_000);
      expectExact(m, [client], invalid);
      expect(await q.streamMessages()).toBe(0);
      expect(await metricValue(b.url, 'sluice_queue_redeliveries_total')).toBeGreaterThan(0);
      await client.close();
    } finally {
      await proxy.close();
    }
  });

  it('tier 3: three collectors with Redis limits, an SDK on each', async () => {
    const app = `lossmap-t3-${process.pid}`;
    const at: StorageAt = { kind: 'postgres', url: db.url };
    const env = {
      SLUICE_DATABASE_URL: db.url,
      SLUICE_REDIS_URL: redisUrl(),
      SLUICE_REDIS_KEY_PREFIX: uniquePrefix('lossmap'),
      SLUICE_EXPECTED_INSTANCES: '3',
      // A burst of one second of the limit (default 10 s), so that the SDKs' load is throttled in part.
      SLUICE_RATE_LIMIT_BURST: '1s',
    };
    const collectors = [await startCollectorProcess(env, { defaults: 'user' })];
    collectors.push(
      ...(await Promise.all([1, 2].map(() => startCollectorProcess(env, { defaults: 'user' })))),
    );
    processes.push(...collectors);
    const clients = collectors.map((c) => sdk(`${c.url}/v1/events`, app));
    let invalid = 0;
    for (const client of clients) invalid += capture(client, 200);
    await Promise.all(clients.map((client) => client.flush({ timeoutMs: 60_000 })));

    const m = await settledLossMap(collectors[1]!.url, app, at, 45_000);
    expectExact(m, clients, invalid);
    expect(m.throttled.rate_limited ?? 0).toBeGreaterThan(0);
    await Promise.all(clients.map((client) => client.close()));
  });
});
