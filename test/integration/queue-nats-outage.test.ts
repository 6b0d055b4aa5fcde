import { UNAVAILABLE_RETRY_AFTER_S } from '../../src/intake/retry-after';
import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { metric } from '../support/events';
import { getJson, postEvents, waitFor } from '../support/http';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import {
  createTestQueue,
  exactlyOnce,
  startPrivateNats,
  startWorkerProcess,
  type PrivateNats,
  type TestQueue,
  type WorkerProcess,
} from './queue-support';

/** NATS goes away (a private server, never the shared one): 503 at once, and recovery by itself. */
describe('queue mode: NATS outage', () => {
  let db: TestDatabase;
  let nats: PrivateNats;
  let q: TestQueue;
  const processes: Array<CollectorProcess | WorkerProcess> = [];

  beforeAll(async () => {
    db = await createTestDatabase('queue_outage');
    nats = await startPrivateNats();
    q = await createTestQueue('outage', nats.url);
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await q?.nc.close();
    await nats?.destroy();
    await db?.drop();
  });

  it('collectors answer 503 fast and /readyz fails while NATS is down; both recover when it is back', async () => {
    const fast = { SLUICE_NATS_PUBLISH_TIMEOUT_MS: '500', SLUICE_HEALTH_INTERVAL_MS: '200' };
    const c = await startCollectorProcess({
      ...q.env,
      ...fast,
      SLUICE_MODE: 'ingest',
      SLUICE_DATABASE_URL: db.url,
    });
    processes.push(c);
    const w = await startWorkerProcess({ ...q.env, ...fast, SLUICE_DATABASE_URL: db.url });
    processes.push(w);

    const before = Array.from({ length: 50 }, () => metric('outage'));
    expect((await postEvents(c.url, before)).status).toBe(202);
    const ids = before.map((e) => e.id as string);
    await waitFor('first events stored', async () => (await exactlyOnce(db.url, ids)) === null, 15_000);

    await nats.stop();
    await waitFor(
      'collector readyz 503',
      async () => (await getJson(`${c.url}/readyz`)).status === 503,
      5000,
    );
    await waitFor('worker readyz 503', async () => (await getJson(`${w.url}/readyz`)).status === 503, 5000);
    for (let i = 0; i < 5; i++) {
      const started = Date.now();
      const res = await postEvents(c.url, [metric('outage')]);
      const took = Date.now() - started;
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe(String(UNAVAILABLE_RETRY_AFTER_S));
      expect(res.body.error).toBe('storage_unavailable');
      // Answered from memory (the disconnect was seen), far below the publish timeout.
      expect(took).toBeLessThan(500);
    }

    await nats.start();
    await waitFor(
      'collector readyz 200 again',
      async () => (await getJson(`${c.url}/readyz`)).status === 200,
      15_000,
    );
    await waitFor(
      'worker readyz 200 again',
      async () => (await getJson(`${w.url}/readyz`)).status === 200,
      15_000,
    );
    const after = Array.from({ length: 50 }, () => metric('outage'));
    expect((await postEvents(c.url, after)).status).toBe(202);
    ids.push(...after.map((e) => e.id as string));
    await waitFor(
      'events after the outage stored',
      async () => (await exactlyOnce(db.url, ids)) === null,
      20_000,
    );
    // The same processes throughout: nothing was restarted by hand.
    expect(c.child.exitCode).toBeNull();
    expect(w.child.exitCode).toBeNull();
  });

  it('a publish that gets no ack is bounded by the publish timeout (503, never a hang)', async () => {
    const c = await startCollectorProcess({
      ...q.env,
      SLUICE_MODE: 'ingest',
      SLUICE_DATABASE_URL: db.url,
      SLUICE_NATS_PUBLISH_TIMEOUT_MS: '400',
      // Slow checks: the request races the monitor, as the first request after a crash would.
      SLUICE_HEALTH_INTERVAL_MS: '60000',
    });
    processes.push(c);
    // Freeze the server: the socket stays open, nothing is answered.
    nats.freeze();
    try {
      const started = Date.now();
      const res = await postEvents(c.url, [metric('frozen')]);
      const took = Date.now() - started;
      expect(res.status).toBe(503);
      expect(took).toBeGreaterThanOrEqual(350);
      expect(took).toBeLessThan(2000);
    } finally {
      nats.thaw();
    }
    await waitFor(
      'collector accepts again',
      async () => (await postEvents(c.url, [metric('frozen')])).status === 202,
      15_000,
    );
  });
});
