import pg from 'pg';
import { getJson } from '../support/http';
import { startInProcess, type InProcessCollector } from '../support/in-process';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/*
 * A read that runs past SLUICE_PG_READ_TIMEOUT_MS answers 503 `storage_busy` naming what the
 * reader can narrow on that route. The reads are made slow by a lock on the tables they read.
 */

let db: TestDatabase;
let c: InProcessCollector;
let locker: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase('read_timeout_hint');
  c = await startInProcess({ SLUICE_DATABASE_URL: db.url, SLUICE_PG_READ_TIMEOUT_MS: '300' });
  locker = new pg.Client({ connectionString: db.url });
  await locker.connect();
  await locker.query('BEGIN');
  await locker.query('LOCK TABLE events, metric_blocks, error_group_progress IN ACCESS EXCLUSIVE MODE');
});

afterAll(async () => {
  await locker?.query('ROLLBACK');
  await locker?.end();
  await c?.stop();
  await db?.drop();
});

describe('a read past SLUICE_PG_READ_TIMEOUT_MS', () => {
  it.each([
    ['/v1/events?text=boom', ['`from`', '`to`', '`app`', '`type`', '`text`']],
    ['/v1/events?app=shop', ['`from`', '`to`', '`type`', '`name`']],
    ['/v1/error-groups', ['`from`', '`to`', '`app`']],
    ['/v1/metrics?name=m&from=0', ['`from`', '`to`', '`app`', '`resolution`']],
  ])('GET %s answers 503 storage_busy naming %s', async (path, named) => {
    const res = await getJson(`${c.url}${path}`);
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('storage_busy');
    expect(res.headers.get('retry-after')).not.toBeNull();
    expect(res.body.message).toMatch(/300 ms/);
    for (const p of named) expect(res.body.message).toContain(p);
  });
});
