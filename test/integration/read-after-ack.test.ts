import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { errorEvent, metric } from '../support/events';
import { getJson, postEvents, waitFor } from '../support/http';
import { createTestDatabase, tempSqlitePath, type TestDatabase } from '../support/postgres';
import { TcpProxy } from '../support/tcp-proxy';
import { READ_LIMITS } from '../../src/read/read-limits';

const idsOf = (body: { events: Array<{ id: string }> }): string[] => body.events.map((e) => e.id);

/**
 * With the default `SLUICE_ACK=queued`, a 202 comes before the commit; a read right after it must
 * still show the event (the README's quick start does exactly this), without ever waiting on a
 * database that is away.
 */
describe('a read sees what was acknowledged before it (SQLite, the defaults a user gets)', () => {
  let c: CollectorProcess;
  beforeAll(async () => {
    c = await startCollectorProcess(
      { SLUICE_SQLITE_PATH: tempSqlitePath('read-after-ack') },
      { defaults: 'user' },
    );
  });
  afterAll(async () => {
    await c?.stop();
  });

  it('a GET right after each 202 shows its event, 5 times in a row', async () => {
    for (let i = 0; i < 5; i++) {
      const e = metric('read-after-ack');
      const answer = await postEvents(c.url, [e]);
      expect(answer.status).toBe(202);
      const read = await getJson(`${c.url}/v1/events?app=read-after-ack&limit=1`);
      expect(idsOf(read.body)).toEqual([e.id]);
    }
  });

  it('both lanes: errors and metrics of one request are read back at once, on every read route', async () => {
    const m = metric('both-lanes', { name: 'both.lanes' });
    const err = errorEvent('both-lanes');
    expect((await postEvents(c.url, [m, err])).status).toBe(202);
    const read = await getJson(`${c.url}/v1/events?app=both-lanes`);
    expect(idsOf(read.body).sort()).toEqual([m.id, err.id].sort());
    const e2 = errorEvent('both-lanes', { error: { message: 'second' } });
    expect((await postEvents(c.url, [e2])).status).toBe(202);
    const groups = await getJson(`${c.url}/v1/error-groups?app=both-lanes`);
    expect(groups.status).toBe(200);
    expect(JSON.stringify(groups.body)).toContain('second');
    const m2 = metric('both-lanes', { name: 'both.lanes', value: 42 });
    expect((await postEvents(c.url, [m2])).status).toBe(202);
    const points = await getJson(`${c.url}/v1/metrics?app=both-lanes&name=both.lanes`);
    expect(points.body.points.map((p: { sum: number }) => p.sum)).toContain(42);
  });

  it('a read with nothing held never waits for the barrier', async () => {
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      expect((await getJson(`${c.url}/v1/events?app=idle&limit=1`)).status).toBe(200);
      expect(performance.now() - started).toBeLessThan(READ_LIMITS.barrierTimeoutMs);
    }
  });
});

describe('the read barrier never waits on a database that is away (PostgreSQL)', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let c: CollectorProcess;

  beforeAll(async () => {
    db = await createTestDatabase('read_after_ack');
    const target = new URL(db.url);
    proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.start();
    const viaProxy = new URL(db.url);
    viaProxy.port = String(proxy.port);
    c = await startCollectorProcess({ SLUICE_DATABASE_URL: viaProxy.toString() }, { defaults: 'user' });
  });
  afterAll(async () => {
    await c?.stop();
    await proxy?.close();
    await db?.drop();
  });

  it('events held while the database is cut: reads answer 503 within the barrier, then show them once it is back', async () => {
    const first = metric('barrier-pg');
    expect((await postEvents(c.url, [first])).status).toBe(202);
    expect(idsOf((await getJson(`${c.url}/v1/events?app=barrier-pg`)).body)).toEqual([first.id]);

    proxy.refuse();
    const held = metric('barrier-pg');
    // ack=queued: the lane takes it while the writer retries.
    expect((await postEvents(c.url, [held])).status).toBe(202);
    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      const read = await getJson(`${c.url}/v1/events?app=barrier-pg`);
      expect({ status: read.status, error: read.body?.error }).toEqual({
        status: 503,
        error: 'storage_unavailable',
      });
      expect(Date.now() - started).toBeLessThan(READ_LIMITS.barrierTimeoutMs + 1000);
    }

    proxy.restore();
    await waitFor('the held event to be stored', async () => {
      const read = await getJson(`${c.url}/v1/events?app=barrier-pg`);
      return read.status === 200 && idsOf(read.body).includes(held.id as string);
    });
  });
});
