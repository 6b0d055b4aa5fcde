import { startCollectorProcess } from '../support/collector-process';
import { errorEvent, metric } from '../support/events';
import { postEvents, waitFor } from '../support/http';
import { idsNotStoredOnce } from '../support/pg-client';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/** Most requests the flood sends, and longest it runs: the bounds of this load loop. */
const MAX_REQUESTS = 4000;
const MAX_MS = 15_000;

/**
 * A real collector process flooded by more concurrent clients than it can serve: it sheds with
 * 429s (refusing requests unread once its event loop lags), never fails a request, and stores
 * every event it acknowledged.
 */
describe('overload (postgres)', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase('overload');
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('refuses requests unread while saturated, answers every request, and stores every acknowledged event', async () => {
    const c = await startCollectorProcess({
      SLUICE_DATABASE_URL: db.url,
      SLUICE_SHED_LAG_MS: '2',
      SLUICE_QUEUE_CAPACITY: '2000',
      SLUICE_BATCH_SIZE: '500',
    });
    const acknowledged: string[] = [];
    const answers: Record<string, number> = {};
    let overloaded = 0;
    let sent = 0;
    let stop = false;
    const deadline = Date.now() + MAX_MS;
    const worker = async (): Promise<void> => {
      while (!stop && sent < MAX_REQUESTS && Date.now() < deadline) {
        sent++;
        const batch = Array.from({ length: 100 }, (_, i) =>
          i % 10 === 0 ? errorEvent('flood') : metric('flood'),
        );
        const res = await postEvents(c.url, batch);
        const kind = `${res.status} ${res.body.error ?? ''}`.trim();
        answers[kind] = (answers[kind] ?? 0) + 1;
        if (res.body.error === 'overloaded') {
          overloaded++;
          expect(res.status).toBe(429);
          expect(res.body).toMatchObject({ accepted: 0, rejected: [] });
          expect(res.body.throttled).toBeUndefined();
          expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
          continue;
        }
        expect([202, 429]).toContain(res.status);
        const throttled = new Set(res.body.throttled ?? []);
        batch.forEach((e, i) => !throttled.has(i) && acknowledged.push(e.id as string));
      }
    };
    const workers = Array.from({ length: 48 }, worker);
    try {
      await waitFor('requests refused unread', () => overloaded >= 20 && acknowledged.length > 0, MAX_MS);
    } finally {
      stop = true;
      await Promise.all(workers);
    }
    const metrics = await (await fetch(`${c.url}/metrics`)).text();
    expect(Number(/sluice_requests_rejected_total\{code="overloaded"\} (\d+)/.exec(metrics)?.[1])).toBe(
      overloaded,
    );

    expect(await c.stop()).toBe(0);
    expect(await idsNotStoredOnce(db.url, acknowledged)).toEqual([]);
    process.stdout.write(
      `overload: answers ${JSON.stringify(answers)}, acknowledged ${acknowledged.length}\n`,
    );
  });
});
