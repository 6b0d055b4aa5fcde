import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { errorEvent, metric, type WireEvent } from '../support/events';
import { postEvents, waitFor } from '../support/http';
import { countStored } from '../support/pg-client';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { TcpProxy } from '../support/tcp-proxy';
import {
  createTestQueue,
  exactlyOnce,
  metricValue,
  startWorkerProcess,
  storedOrHeldOnce,
  type TestQueue,
  type WorkerProcess,
} from './queue-support';

/** Workers that die or stop: the stream keeps what they have not acked, nothing is lost or doubled. */
describe('queue mode: workers dying and stopping', () => {
  let db: TestDatabase;
  const queues: TestQueue[] = [];
  const processes: Array<CollectorProcess | WorkerProcess> = [];

  beforeAll(async () => {
    db = await createTestDatabase('queue_workers');
  });

  afterEach(async () => {
    await Promise.all(processes.splice(0).map((p) => p.stop()));
    await Promise.all(queues.splice(0).map((q) => q.cleanup()));
  });

  afterAll(async () => {
    await db?.drop();
  });

  async function post(url: string, count: number, app: string): Promise<string[]> {
    const batch: WireEvent[] = Array.from({ length: count }, (_, i) =>
      i % 10 === 0 ? errorEvent(app) : metric(app),
    );
    const res = await postEvents(url, batch);
    expect(res.status).toBe(202);
    return batch.map((e) => e.id as string);
  }

  it('kill -9 of a worker mid-batch: its unacked messages are delivered again and stored exactly once', async () => {
    const q = await createTestQueue('kill');
    queues.push(q);
    // Worker A reaches PostgreSQL through a proxy the test can cut: its batch in hand then hangs
    // in the write, unacked, when it is killed.
    const target = new URL(db.url);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.start();
    const viaProxy = new URL(db.url);
    viaProxy.port = String(proxy.port);
    const workerEnv = { ...q.env, SLUICE_WORKER_BATCH_SIZE: '100', SLUICE_WORKER_ACK_WAIT: '2s' };
    try {
      const c = await startCollectorProcess({ ...q.env, SLUICE_MODE: 'ingest', SLUICE_DATABASE_URL: db.url });
      processes.push(c);
      const a = await startWorkerProcess({ ...workerEnv, SLUICE_DATABASE_URL: viaProxy.toString() });
      processes.push(a);

      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push(...(await post(c.url, 100, 'kill')));
      await waitFor('first wave stored', async () => (await countStored(db.url, ids)) === ids.length, 15_000);

      proxy.cut();
      for (let i = 0; i < 7; i++) ids.push(...(await post(c.url, 100, 'kill')));
      const consumer = `${q.stream}_standard`;
      await waitFor(
        'worker A holding an unacked batch',
        async () => (await q.jsm.consumers.info(q.stream, consumer)).num_ack_pending > 0,
        10_000,
      );
      await a.kill();
      expect(await countStored(db.url, ids)).toBeLessThan(ids.length);

      const b = await startWorkerProcess({ ...workerEnv, SLUICE_DATABASE_URL: db.url });
      processes.push(b);
      await waitFor('every event stored once', async () => (await exactlyOnce(db.url, ids)) === null, 30_000);
      expect(await metricValue(b.url, 'sluice_queue_redeliveries_total')).toBeGreaterThan(0);
      expect(await q.streamMessages()).toBe(0);
    } finally {
      await proxy.close();
    }
  });

  it('workers stopped during a burst: intake keeps answering 202, the stream holds it, restarted workers catch up', async () => {
    const q = await createTestQueue('burst');
    queues.push(q);
    const c = await startCollectorProcess({ ...q.env, SLUICE_MODE: 'ingest', SLUICE_DATABASE_URL: db.url });
    processes.push(c);
    const workerEnv = { ...q.env, SLUICE_DATABASE_URL: db.url, SLUICE_WORKER_BATCH_SIZE: '200' };
    const first = await startWorkerProcess(workerEnv);

    const ids: string[] = [];
    const statuses = new Map<number, number>();
    let requests = 0;
    let stopped: Promise<number | null> | null = null;
    const sender = async () => {
      for (let i = 0; i < 15; i++) {
        const batch = Array.from({ length: 100 }, (_, j) =>
          j % 10 === 0 ? errorEvent('burst') : metric('burst'),
        );
        const res = await postEvents(c.url, batch);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status === 202) ids.push(...batch.map((e) => e.id as string));
        // SIGTERM the only worker mid-burst: it finishes the batch in hand, acks it, exits 0.
        if (++requests === 10) stopped = first.stop();
      }
    };
    await Promise.all([sender(), sender(), sender(), sender()]);
    expect(statuses.get(202)).toBe(60);
    expect(await stopped).toBe(0);

    // Nobody consumes now: the backlog is in the stream, not lost, not yet in PostgreSQL.
    expect(await q.streamMessages()).toBeGreaterThan(0);
    expect(await storedOrHeldOnce(db.url, q, ids)).toBeNull();

    const restarted = await Promise.all([startWorkerProcess(workerEnv), startWorkerProcess(workerEnv)]);
    processes.push(...restarted);
    await waitFor(
      'the backlog drained, every event once',
      async () => (await exactlyOnce(db.url, ids)) === null,
      30_000,
    );
    expect(await q.streamMessages()).toBe(0);
  });
});
