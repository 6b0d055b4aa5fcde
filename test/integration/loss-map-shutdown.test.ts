import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { errorEvent, log, metric } from '../support/events';
import { postEvents, waitFor } from '../support/http';
import { logLine } from '../support/sluice-process';
import { lossMap, rowsOfApp, settledLossMap, totalLosses } from '../support/loss-map';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { TcpProxy } from '../support/tcp-proxy';

/**
 * A collector stopped while its database cannot take its writes: the shutdown deadline passes,
 * the forced path gives up on the events it holds, and the loss map says so. The tables the writer
 * inserts into are locked from another connection, so the writes block (and time out) while the
 * loss map's own table stays writable. Afterwards, with the lock released, the events it held are
 * `losses.shutdown.shutdown_timeout`, nothing is pending, and generated = stored + lost exactly.
 */
describe('loss map: events dropped at a forced shutdown (postgres)', () => {
  let db: TestDatabase;
  const running: CollectorProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('loss_map_shutdown');
  });

  afterAll(async () => {
    for (const c of running) await c.stop();
    await db?.drop();
  });

  it('counts the events a collector held when its shutdown deadline passed as dropped, and writes the count before it exits', async () => {
    const at = { kind: 'postgres', url: db.url } as const;
    const app = 'held-at-shutdown';
    const env = {
      SLUICE_DATABASE_URL: db.url,
      SLUICE_SHUTDOWN_GRACE_MS: '200',
      SLUICE_SHUTDOWN_TIMEOUT_MS: '1000',
      SLUICE_STORAGE_TIMEOUT_MS: '1000',
    };
    const first = await startCollectorProcess(env);
    running.push(first);

    // Some stored first: the identity then has a term of each kind.
    const before = [metric(app), log(app), errorEvent(app)];
    expect((await postEvents(first.url, before)).status).toBe(202);
    await settledLossMap(first.url, app, at);

    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    let exitCode: number | null;
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE events, metric_blocks IN ACCESS EXCLUSIVE MODE');
      const held = [
        ...Array.from({ length: 10 }, () => metric(app)),
        ...Array.from({ length: 5 }, () => log(app)),
        ...Array.from({ length: 3 }, () => errorEvent(app)),
      ];
      const answer = await postEvents(first.url, held);
      expect(answer.status).toBe(202);
      expect(answer.body.accepted).toBe(18);
      // A write is blocked on the lock: the shutdown finds a batch in flight as well as queued events.
      await waitFor('a write blocked on the lock', async () => {
        const r = await locker.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'sluice:writer' AND wait_event_type = 'Lock'`,
        );
        return r.rows[0].n > 0;
      });
      exitCode = await first.stop();
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    expect(exitCode).toBe(1);

    const second = await startCollectorProcess(env);
    running.push(second);
    const m = await lossMap(second.url, app);
    // When the count is not there, what the first collector logged of its forced path says why.
    if (!isDeepStrictEqual(m.losses.shutdown, { shutdown_timeout: 18 })) {
      throw new Error(
        `loss map ${JSON.stringify(m)}; the stopped collector logged:\n${first.output.join('\n')}`,
      );
    }
    expect(m).toMatchObject({ generated: 21, stored: 3, lost: 18, pending: { sdk: 0, pipeline: 0 } });
    expect(m.generated).toBe(m.stored + totalLosses(m) + m.pending.sdk + m.pending.pipeline);
    expect(await rowsOfApp(at, app)).toBe(3);
    const output = first.output.join('\n');
    expect(output).toMatch(/events held at a forced shutdown dropped/);
    expect(output).not.toMatch(/loss-map counts not written at stop/);
  }, 60_000);

  it('a write still blocked when the forced path ends is cut, and its events are counted as dropped', async () => {
    const at = { kind: 'postgres', url: db.url } as const;
    const app = 'in-flight-at-shutdown';
    // A statement may wait longer than the forced path's flush and wait (5 s each): the write blocked
    // on the lock is still in flight when the collector exits.
    const env = {
      SLUICE_DATABASE_URL: db.url,
      SLUICE_SHUTDOWN_GRACE_MS: '200',
      SLUICE_SHUTDOWN_TIMEOUT_MS: '1000',
      SLUICE_STORAGE_TIMEOUT_MS: '60000',
    };
    const first = await startCollectorProcess(env);
    running.push(first);
    expect((await postEvents(first.url, [metric(app), log(app)])).status).toBe(202);
    await settledLossMap(first.url, app, at);

    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    let exitCode: number | null;
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE events, metric_blocks IN ACCESS EXCLUSIVE MODE');
      const held = [...Array.from({ length: 6 }, () => metric(app)), log(app), errorEvent(app)];
      expect((await postEvents(first.url, held)).body.accepted).toBe(8);
      await waitFor('a write blocked on the lock', async () => {
        const r = await locker.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'sluice:writer' AND wait_event_type = 'Lock'`,
        );
        return r.rows[0].n > 0;
      });
      exitCode = await first.stop();
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    expect(exitCode).toBe(1);

    const second = await startCollectorProcess(env);
    running.push(second);
    // The cut transaction never commits: once the lock is gone, nothing of it appears.
    const m = await settledLossMap(second.url, app, at).catch(async (err: unknown) => {
      throw new Error(`${(err as Error).message}; the stopped collector logged:\n${first.output.join('\n')}`);
    });
    expect(m).toMatchObject({ generated: 10, stored: 2, lost: 8, pending: { sdk: 0, pipeline: 0 } });
    expect(m.losses.shutdown).toEqual({ shutdown_timeout: 8 });
    expect(await rowsOfApp(at, app)).toBe(2);
  }, 60_000);

  it('when the database itself is away, says so: the events dropped are logged per app, minute and type, the only record of them', async () => {
    const at = { kind: 'postgres', url: db.url } as const;
    const app = 'held-database-away';
    const target = new URL(db.url);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.start();
    const viaProxy = new URL(db.url);
    viaProxy.port = String(proxy.port);
    const env = {
      SLUICE_SHUTDOWN_GRACE_MS: '200',
      SLUICE_SHUTDOWN_TIMEOUT_MS: '1000',
      SLUICE_STORAGE_TIMEOUT_MS: '1000',
    };
    try {
      const c = await startCollectorProcess({ ...env, SLUICE_DATABASE_URL: viaProxy.toString() });
      running.push(c);
      expect((await postEvents(c.url, [metric(app), log(app), errorEvent(app)])).status).toBe(202);
      await settledLossMap(c.url, app, at);

      // A SIGSTOPped server: connections open, nothing answers. With SLUICE_ACK=queued (the
      // default) the collector still takes events into its lanes.
      proxy.pause();
      const held = [...Array.from({ length: 5 }, () => metric(app)), log(app), errorEvent(app)];
      const answer = await postEvents(c.url, held);
      expect(answer.status).toBe(202);
      expect(answer.body.accepted).toBe(7);
      expect(await c.stop()).toBe(1);

      const dropped = logLine(c.output, 'events held at a forced shutdown dropped');
      expect(dropped).toMatchObject({ reason: 'shutdown_timeout', events: 7 });
      const notWritten = logLine(c.output, 'loss-map counts not written at stop');
      expect(notWritten?.events).toMatchObject({ accepted: 7, dropped: 7 });
      const drops = notWritten?.dropped as Array<{
        app: string;
        type: string;
        reason: string;
        count: number;
      }>;
      expect(drops.every((d) => d.app === app && d.reason === 'shutdown_timeout')).toBe(true);
      expect(drops.reduce((n, d) => n + d.count, 0)).toBe(7);
    } finally {
      proxy.restore();
      await proxy.close();
    }

    // The loss map never heard of them: not even their acceptance could be written.
    const direct = await startCollectorProcess({ ...env, SLUICE_DATABASE_URL: db.url });
    running.push(direct);
    const m = await lossMap(direct.url, app);
    expect(m).toMatchObject({ generated: 3, stored: 3, lost: 0, pending: { sdk: 0, pipeline: 0 } });
    expect(await rowsOfApp(at, app)).toBe(3);
  }, 60_000);
});
