import pg from 'pg';
import { log, metric } from '../support/events';
import { postEvents, waitFor } from '../support/http';
import { startInProcess, type InProcessCollector } from '../support/in-process';
import { lossMap, rowsOfApp, settledLossMap, totalLosses } from '../support/loss-map';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/**
 * A request acknowledged only once durable (`SLUICE_ACK=stored`) whose commit outlasts the ack
 * timeout is answered 503, and its sender sends it again: the loss map counts each copy that
 * reaches storage as accepted once (the first when it is stored, however late), and the resent copy
 * storage already holds as a duplicate, so after the resend the identity holds with nothing
 * pending, however the first attempt ended.
 */
describe('loss map: a durable acknowledgement that timed out (postgres)', () => {
  let db: TestDatabase;
  let c: InProcessCollector;
  let admin: pg.Client;
  const at = () => ({ kind: 'postgres' as const, url: db.url });

  beforeAll(async () => {
    db = await createTestDatabase('loss_map_ack_timeout');
    c = await startInProcess(
      { SLUICE_DATABASE_URL: db.url, SLUICE_ACK: 'stored', SLUICE_ACK_TIMEOUT_MS: '300' },
      { defaults: 'user' },
    );
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
  });

  afterAll(async () => {
    await admin?.end();
    await c?.stop();
    await db?.drop();
  });

  it('counts events answered 503 as accepted once stored, and their resend as duplicates', async () => {
    const app = 'ack-timeout';
    const ts = Date.now();
    const batch = [log(app, { ts }), log(app, { ts }), metric(app, { ts })];

    // The commit waits on a lock the test holds, past the 300 ms the request may wait for it.
    await admin.query('BEGIN');
    await admin.query('LOCK TABLE events IN ACCESS EXCLUSIVE MODE');
    let first: Awaited<ReturnType<typeof postEvents>>;
    try {
      first = await postEvents(c.url, batch);
    } finally {
      await admin.query('COMMIT');
    }
    expect(first.status).toBe(503);
    // The batch was in the lane all along: it is stored once the lock is gone.
    await waitFor('the first attempt to be stored', async () => (await rowsOfApp(at(), app)) === 3);

    const resent = await postEvents(c.url, batch);
    expect(resent.status).toBe(202);

    // The resend's counts reach the loss map with the recorder's next write (once a second): the
    // map settles on the first attempt's alone before that.
    await waitFor('the resend to be counted', async () => (await lossMap(c.url, app)).generated === 6);
    const m = await settledLossMap(c.url, app, at());
    expect(m.generated).toBe(6);
    expect(m.stored).toBe(3);
    expect(m.losses.storage).toEqual({ duplicate: 3 });
    expect(totalLosses(m)).toBe(3);
    expect(m.throttled).toEqual({ unavailable: 3 });
    expect(m.generated).toBe(m.stored + totalLosses(m) + m.pending.sdk + m.pending.pipeline);
  });
});
