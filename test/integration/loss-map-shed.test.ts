import { startCollectorProcess } from '../support/collector-process';
import { errorEvent, metric } from '../support/events';
import { postEvents, waitFor } from '../support/http';
import { lossMap, totalLosses, type LossMapAnswer } from '../support/loss-map';
import { createTestDatabase, tempSqlitePath, type TestDatabase } from '../support/postgres';

/** Most requests the flood sends, and longest it runs: the bounds of this load loop. */
const MAX_REQUESTS = 4000;
const MAX_MS = 20_000;

/**
 * Requests refused unread (429 `overloaded`) in the loss map, with the defaults a user gets (the
 * shed threshold, the rate limit, no keys file): a collector process flooded by more concurrent
 * clients than it can serve sheds, and `GET /v1/outcomes?app=` (no key, so no app is known) counts
 * exactly the requests the clients were answered `overloaded`, in the window and per minute,
 * outside the identity.
 */
describe.each(['sqlite', 'postgres'] as const)('loss map: requests shed unread (%s)', (kind) => {
  let db: TestDatabase | null = null;

  beforeAll(async () => {
    db = kind === 'postgres' ? await createTestDatabase('loss_map_shed') : null;
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('counts every request answered 429 overloaded as a shed request of app ""', async () => {
    const c = await startCollectorProcess(
      db ? { SLUICE_DATABASE_URL: db.url } : { SLUICE_SQLITE_PATH: tempSqlitePath('loss_map_shed') },
      { defaults: 'user' },
    );
    let overloaded = 0;
    let sent = 0;
    let stop = false;
    const deadline = Date.now() + MAX_MS;
    const worker = async (n: number): Promise<void> => {
      while (!stop && sent < MAX_REQUESTS && Date.now() < deadline) {
        sent++;
        const app = `shed-${kind}-${n}`;
        const batch = Array.from({ length: 100 }, (_, i) => (i % 10 === 0 ? errorEvent(app) : metric(app)));
        const res = await postEvents(c.url, batch);
        if (res.body.error === 'overloaded') overloaded++;
      }
    };
    const workers = Array.from({ length: 48 }, (_, n) => worker(n));
    try {
      await waitFor('requests refused unread', () => overloaded >= 20, MAX_MS);
    } finally {
      stop = true;
      await Promise.all(workers);
    }

    try {
      const m = await waitFor(
        'the shed requests in the loss map',
        async () => {
          const answer = await lossMap(c.url, '', '&by=minute');
          return answer.shed_requests === overloaded ? answer : null;
        },
        10_000,
      ).catch(async (err: Error) => {
        throw new Error(
          `${err.message}; answered overloaded ${overloaded}; ${JSON.stringify(await lossMap(c.url, ''))}`,
        );
      });
      const minutes = m.minutes ?? [];
      expect(minutes.reduce((n, row) => n + row.shed_requests, 0)).toBe(overloaded);
      // Outside the identity: nothing of a shed request was read.
      expect(m.generated).toBe(m.stored + totalLosses(m) + m.pending.sdk + m.pending.pipeline);
      const metrics = await (await fetch(`${c.url}/metrics`)).text();
      expect(Number(/sluice_requests_rejected_total\{code="overloaded"\} (\d+)/.exec(metrics)?.[1])).toBe(
        overloaded,
      );
      // An app's own map has none: without a key, a request's app is not known before its body is read.
      const own: LossMapAnswer = await lossMap(c.url, `shed-${kind}-0`);
      expect(own.shed_requests).toBe(0);
    } finally {
      await c.stop();
    }
    process.stdout.write(`loss map shed (${kind}): ${sent} requests, ${overloaded} shed\n`);
  }, 60_000);
});
