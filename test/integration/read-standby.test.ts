import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { metric } from '../support/events';
import { getJson, postEvents, waitFor } from '../support/http';
import pg from 'pg';
import {
  startPostgresStandby,
  startPrivatePrimary,
  type PostgresStandby,
  type PrivatePrimary,
} from '../support/postgres-standby';

async function psqlAdmin(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const idsOf = (body: { events: Array<{ id: string }> }): string[] => body.events.map((e) => e.id);
/** A read never waits longer than the read barrier, the standby's wait and a connect timeout, with room for a shared CPU. */
const READ_BOUND_MS = 3000;

/**
 * `SLUICE_DATABASE_READ_URL` on a real streaming-replication standby (pg_basebackup of a primary
 * the test starts, each on its own port and folder), with the defaults a user gets: reads go to the standby and
 * still see what was acknowledged; a standby that lags or is stopped sends them to the primary.
 */
describe('reads from a PostgreSQL standby', () => {
  let primary: PrivatePrimary;
  let db: { url: string };
  let standby: PostgresStandby;
  let c: CollectorProcess;

  beforeAll(async () => {
    // A primary of the test's own: replication needs no change to the machine's PostgreSQL.
    primary = await startPrivatePrimary();
    const database = 'read_standby';
    await psqlAdmin(primary.url, `CREATE DATABASE ${database}`);
    db = { url: primary.urlOf(database) };
    standby = await startPostgresStandby(primary.url);
    // The database exists on the standby once replay has reached its creation.
    await waitFor('the test database on the standby', async () => {
      const found = await standby.sql(`SELECT 1 FROM pg_database WHERE datname = '${database}'`);
      return found.trim() === '1';
    });
    c = await startCollectorProcess(
      { SLUICE_DATABASE_URL: db.url, SLUICE_DATABASE_READ_URL: standby.urlOf(database) },
      { defaults: 'user' },
    );
  }, 120_000);
  afterAll(async () => {
    await c?.stop();
    await standby?.remove();
    await primary?.remove();
  }, 60_000);

  it('a GET right after each 202 shows its event, read from the standby', async () => {
    // The migrations replay first: until then the standby is behind on what this collector wrote.
    await waitFor('reads from the standby', async () => {
      const r = await getJson(`${c.url}/v1/events?app=standby-warmup&limit=1`);
      return r.headers.get('x-sluice-read-source') === 'standby';
    });
    for (let i = 0; i < 5; i++) {
      const e = metric('standby-ack');
      expect((await postEvents(c.url, [e])).status).toBe(202);
      const read = await getJson(`${c.url}/v1/events?app=standby-ack&limit=1`);
      expect(read.status).toBe(200);
      expect(read.headers.get('x-sluice-read-source')).toBe('standby');
      expect(idsOf(read.body)).toEqual([e.id]);
    }
    const pipeline = await getJson(`${c.url}/pipeline`);
    expect(pipeline.body.read_standby).toMatchObject({ up: true, error: null });
    expect(typeof pipeline.body.read_standby.lag_seconds).toBe('number');
    const text = await (await fetch(`${c.url}/metrics`)).text();
    expect(text).toMatch(/^sluice_read_standby_up 1$/m);
    expect(text).toMatch(/^sluice_read_standby_lag_seconds [0-9.e-]+$/m);
    expect(text).toMatch(/^sluice_read_standby_routes_total\{source="standby",reason="none"\} [1-9]/m);
  }, 60_000);

  it('replay paused: a read after an ack waits a bounded time, then answers from the primary with the event', async () => {
    await standby.sql('SELECT pg_wal_replay_pause()');
    try {
      const e = metric('standby-paused');
      expect((await postEvents(c.url, [e])).status).toBe(202);
      const started = performance.now();
      const read = await getJson(`${c.url}/v1/events?app=standby-paused&limit=1`);
      const tookMs = performance.now() - started;
      expect(read.status).toBe(200);
      expect(idsOf(read.body)).toEqual([e.id]);
      expect(read.headers.get('x-sluice-read-source')).toMatch(
        /^primary; reason=(not_replayed|standby_lagging)$/,
      );
      expect(tookMs).toBeLessThan(READ_BOUND_MS);
    } finally {
      await standby.sql('SELECT pg_wal_replay_resume()');
    }
    await waitFor('reads from the standby again', async () => {
      const r = await getJson(`${c.url}/v1/events?app=standby-paused&limit=1`);
      return r.headers.get('x-sluice-read-source') === 'standby';
    });
  }, 60_000);

  it('standby stopped: reads are answered from the primary, at once and with the events', async () => {
    await standby.stop();
    for (let i = 0; i < 3; i++) {
      const e = metric('standby-down');
      expect((await postEvents(c.url, [e])).status).toBe(202);
      const started = performance.now();
      const read = await getJson(`${c.url}/v1/events?app=standby-down&limit=1`);
      expect(read.status).toBe(200);
      expect(read.headers.get('x-sluice-read-source')).toBe('primary; reason=standby_down');
      expect(idsOf(read.body)).toEqual([e.id]);
      expect(performance.now() - started).toBeLessThan(READ_BOUND_MS);
    }
    await waitFor('the standby down on /pipeline', async () => {
      const p = await getJson(`${c.url}/pipeline`);
      return p.body.read_standby?.up === false;
    });
    const text = await (await fetch(`${c.url}/metrics`)).text();
    expect(text).toMatch(/^sluice_read_standby_up 0$/m);
  }, 60_000);
});
