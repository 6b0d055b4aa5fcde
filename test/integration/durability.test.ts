import { startCollectorProcess } from '../support/collector-process';
import { errorEvent, metric } from '../support/events';
import { getJson, postEvents, waitFor } from '../support/http';
import { startInProcess } from '../support/in-process';
import { countStored } from '../support/pg-client';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { TcpProxy } from '../support/tcp-proxy';
import { exactlyOnce } from './queue-support';

/** What 202 promises, on real PostgreSQL: under SIGTERM, with SLUICE_ACK=stored, and while storage is away. */
describe('durability (postgres)', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase('durability');
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('SIGTERM under load: every event acknowledged with 202 is stored, exit code 0', async () => {
    const c = await startCollectorProcess({
      SLUICE_DATABASE_URL: db.url,
      SLUICE_DRAIN_DELAY_MS: '300',
      SLUICE_FLUSH_INTERVAL_MS: '100',
    });
    const acknowledged: string[] = [];
    let requests = 0;
    let stop = false;
    const deadline = Date.now() + 20_000;
    const worker = async () => {
      while (!stop && Date.now() < deadline) {
        const batch = Array.from({ length: 50 }, (_, i) =>
          i % 10 === 0 ? errorEvent('term') : metric('term'),
        );
        const res = await postEvents(c.url, batch).catch(() => null);
        if (res === null) return; // listener closed: this client would move to another instance
        requests++;
        if (res.status === 202 || res.status === 429) {
          const throttled = new Set(res.body.throttled ?? []);
          batch.forEach((e, i) => !throttled.has(i) && acknowledged.push(e.id as string));
        }
      }
    };
    const workers = Array.from({ length: 6 }, worker);
    await waitFor('load under way', () => requests >= 30, 15_000);
    c.child.kill('SIGTERM');
    const code = await c.exited;
    stop = true;
    await Promise.all(workers);
    expect(code).toBe(0);
    expect(acknowledged.length).toBeGreaterThan(1000);
    expect(await exactlyOnce(db.url, acknowledged)).toBeNull();
  });

  it('SLUICE_ACK=stored answers 202 only after the commit', async () => {
    const stored = await startInProcess({
      SLUICE_DATABASE_URL: db.url,
      SLUICE_ACK: 'stored',
      SLUICE_FLUSH_INTERVAL_MS: '3000',
    });
    const queued = await startInProcess({ SLUICE_DATABASE_URL: db.url, SLUICE_FLUSH_INTERVAL_MS: '3000' });
    try {
      const a = Array.from({ length: 10 }, () => metric('ack'));
      const started = Date.now();
      expect((await postEvents(stored.url, a)).status).toBe(202);
      // Group commit: the senders wait on the commit, so the writer does not wait for the batch
      // to fill (the flush interval, 3 s, is for ack=queued).
      expect(Date.now() - started).toBeLessThan(3000);
      expect(
        await exactlyOnce(
          db.url,
          a.map((e) => e.id as string),
        ),
      ).toBeNull();

      // The contrast: with SLUICE_ACK=queued the answer comes before the commit.
      const b = Array.from({ length: 10 }, () => metric('ack'));
      expect((await postEvents(queued.url, b)).status).toBe(202);
      expect(
        await countStored(
          db.url,
          b.map((e) => e.id as string),
        ),
      ).toBe(0);
      await waitFor(
        'queued events stored',
        async () =>
          (await exactlyOnce(
            db.url,
            b.map((e) => e.id as string),
          )) === null,
      );
    } finally {
      await stored.stop();
      await queued.stop();
    }
  });

  // cut: connections dropped, new ones black-holed; pause: connections open, nothing answers (a
  // SIGSTOPped server: the writer's transaction in flight hangs until its timeout).
  it.each(['cut', 'pause'] as const)(
    'storage away (%s): readyz 503, intake answers without hanging, recovers by itself, nothing acknowledged lost',
    async (fault) => {
      const target = new URL(db.url);
      const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
      await proxy.start();
      const viaProxy = new URL(db.url);
      viaProxy.port = String(proxy.port);
      const common = {
        SLUICE_DATABASE_URL: viaProxy.toString(),
        SLUICE_HEALTH_INTERVAL_MS: '100',
        SLUICE_STORAGE_TIMEOUT_MS: '500',
        SLUICE_FLUSH_INTERVAL_MS: '20',
      };
      const c = await startInProcess({ ...common, SLUICE_QUEUE_CAPACITY: '300', SLUICE_BATCH_SIZE: '50' });
      const strict = await startInProcess({ ...common, SLUICE_ACK: 'stored', SLUICE_ACK_TIMEOUT_MS: '1500' });
      const acknowledged: string[] = [];
      try {
        const first = Array.from({ length: 50 }, () => metric('away'));
        expect((await postEvents(c.url, first)).status).toBe(202);
        acknowledged.push(...first.map((e) => e.id as string));
        await waitFor('first batch stored', async () => (await exactlyOnce(db.url, acknowledged)) === null);

        proxy[fault]();
        await waitFor('readyz 503', async () => (await getJson(`${c.url}/readyz`)).status === 503, 5000);
        expect((await getJson(`${c.url}/readyz`)).body).toEqual({ status: 'storage_unavailable' });

        let saw429 = false;
        for (let i = 0; i < 12; i++) {
          const batch = Array.from({ length: 50 }, (_, k) => (k === 0 ? errorEvent('away') : metric('away')));
          const started = Date.now();
          const res = await postEvents(c.url, batch);
          expect(Date.now() - started).toBeLessThan(1000);
          expect([202, 429]).toContain(res.status);
          if (res.status === 429) {
            saw429 = true;
            expect(res.body.error).toBe('queue_full');
            expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
          }
          const throttled = new Set(res.body.throttled ?? []);
          batch.forEach((e, k) => !throttled.has(k) && acknowledged.push(e.id as string));
        }
        expect(saw429).toBe(true);

        await waitFor(
          'strict collector sees storage down',
          async () => (await getJson(`${strict.url}/readyz`)).status === 503,
          5000,
        );
        const started = Date.now();
        const refused = await postEvents(strict.url, [metric('away')]);
        expect(refused.status).toBe(503);
        expect(refused.body.error).toBe('storage_unavailable');
        expect(Date.now() - started).toBeLessThan(1000);

        proxy.restore();
        await waitFor(
          'readyz 200 again',
          async () => (await getJson(`${c.url}/readyz`)).status === 200,
          15_000,
        );
        await waitFor(
          'every acknowledged event stored once',
          async () => (await exactlyOnce(db.url, acknowledged)) === null,
          20_000,
        );
        expect(await exactlyOnce(db.url, acknowledged)).toBeNull();
      } finally {
        proxy.restore();
        await c.stop();
        await strict.stop();
        await proxy.close();
      }
    },
  );
});
