import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { errorEvent, log, metric } from '../support/events';
import { postEvents, waitFor } from '../support/http';
import { logLine } from '../support/sluice-process';
import { lossMap, rowsOfApp, settledLossMap, totalLosses, type StorageAt } from '../support/loss-map';
import { tempSqlitePath } from '../support/postgres';

const env = (file: string) => ({
  SLUICE_SQLITE_PATH: file,
  SLUICE_SHUTDOWN_GRACE_MS: '200',
  SLUICE_SHUTDOWN_TIMEOUT_MS: '1000',
  SLUICE_STORAGE_TIMEOUT_MS: '1000',
});

/**
 * Longest a forced shutdown may take from SIGTERM to exit with these settings (docs/ARCHITECTURE.md,
 * "Shutdown"): the shutdown timeout, 5 s flushing, 5 s waiting for the writes in flight, 5 s of the
 * recorder's last write, and a few statements blocking the event loop for the storage timeout each
 * while they wait on the lock (better-sqlite3 is synchronous).
 */
const EXIT_BOUND_MS = 1000 + 3 * 5000 + 8 * 1000;

/** The exit code of `c`, once it has exited; fails (and kills it) when it runs past `timeoutMs`. */
async function exitWithin(c: CollectorProcess, timeoutMs: number): Promise<number | null> {
  try {
    await waitFor(
      'the collector to exit',
      () => c.child.exitCode !== null || c.child.signalCode !== null,
      timeoutMs,
    );
  } catch (err) {
    c.child.kill('SIGKILL');
    throw new Error(`${(err as Error).message}; its output:\n${c.output.join('\n')}`, { cause: err });
  }
  return c.exited;
}

/** 18 events of `app`: 10 metric samples, 5 logs, 3 errors. */
const heldEvents = (app: string) => [
  ...Array.from({ length: 10 }, () => metric(app)),
  ...Array.from({ length: 5 }, () => log(app)),
  ...Array.from({ length: 3 }, () => errorEvent(app)),
];

/**
 * Tier 1's version of loss-map-shutdown.test.ts. On SQLite the loss map shares the file's one
 * write lock with the data, so a lock held by another connection blocks both: the forced path
 * gives up on the events, and the count of them lands only if the lock is free before the
 * recorder's last write gives up (docs/ARCHITECTURE.md, "The loss map" and "Shutdown").
 */
describe('loss map: events dropped at a forced shutdown (sqlite)', () => {
  const file = tempSqlitePath('loss_map_shutdown');
  const at: StorageAt = { kind: 'sqlite', path: file };
  const running: CollectorProcess[] = [];

  afterAll(async () => {
    for (const c of running) await c.stop();
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });

  /**
   * Starts a collector, stores 3 events of `app`, takes the write lock from another connection,
   * has it accept 18 more (which it cannot write), and sends SIGTERM. Returns the collector
   * (stopping) and the connection holding the lock, still in its transaction.
   */
  async function stopWhileLocked(app: string): Promise<{ c: CollectorProcess; locker: Database.Database }> {
    const c = await startCollectorProcess(env(file));
    running.push(c);
    expect((await postEvents(c.url, [metric(app), log(app), errorEvent(app)])).status).toBe(202);
    await settledLossMap(c.url, app, at);

    const locker = new Database(file);
    locker.exec('BEGIN IMMEDIATE');
    const answer = await postEvents(c.url, heldEvents(app));
    expect(answer.status).toBe(202);
    expect(answer.body.accepted).toBe(18);
    await waitFor('a write failed on the lock', () => logLine(c.output, 'storage write failed; retrying'));
    c.child.kill('SIGTERM');
    return { c, locker };
  }

  it('counts the events held when its shutdown deadline passed as dropped, and writes the count once the lock is free, before it exits', async () => {
    const app = 'held-at-shutdown';
    const { c, locker } = await stopWhileLocked(app);
    try {
      // The forced path has given up on them; the recorder's last write waits on the lock.
      await waitFor(
        'the forced path to drop the events',
        () => logLine(c.output, 'events held at a forced shutdown dropped'),
        EXIT_BOUND_MS,
      );
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
    }
    expect(await exitWithin(c, EXIT_BOUND_MS)).toBe(1);
    const output = c.output.join('\n');
    expect(logLine(c.output, 'events held at a forced shutdown dropped')).toMatchObject({
      reason: 'shutdown_timeout',
      events: 18,
    });
    expect(output).not.toMatch(/loss-map counts not written at stop/);

    const second = await startCollectorProcess(env(file));
    running.push(second);
    const m = await lossMap(second.url, app);
    expect(m.losses.shutdown).toEqual({ shutdown_timeout: 18 });
    expect(m).toMatchObject({ generated: 21, stored: 3, lost: 18, pending: { sdk: 0, pipeline: 0 } });
    expect(m.generated).toBe(m.stored + totalLosses(m) + m.pending.sdk + m.pending.pipeline);
    expect(await rowsOfApp(at, app)).toBe(3);
    await second.stop();
  }, 90_000);

  it('with the lock never released, exits 1 within its timeouts and logs the counts it could not write, per app, minute and type', async () => {
    const app = 'held-lock-kept';
    const { c, locker } = await stopWhileLocked(app);
    let code: number | null;
    try {
      code = await exitWithin(c, EXIT_BOUND_MS);
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
    }
    expect(code).toBe(1);
    const dropped = logLine(c.output, 'events held at a forced shutdown dropped');
    expect(dropped).toMatchObject({ reason: 'shutdown_timeout', events: 18 });
    // The only record of them: the process exits, so no metric can say it.
    const notWritten = logLine(c.output, 'loss-map counts not written at stop');
    expect(notWritten?.events).toMatchObject({ accepted: 18, dropped: 18 });
    const drops = notWritten?.dropped as Array<{ app: string; reason: string; count: number }>;
    expect(drops.every((d) => d.app === app && d.reason === 'shutdown_timeout')).toBe(true);
    expect(drops.reduce((n, d) => n + d.count, 0)).toBe(18);

    const second = await startCollectorProcess(env(file));
    running.push(second);
    const m = await lossMap(second.url, app);
    expect(m).toMatchObject({ generated: 3, stored: 3, lost: 0, pending: { sdk: 0, pipeline: 0 } });
    expect(await rowsOfApp(at, app)).toBe(3);
    await second.stop();
  }, 90_000);
});
