import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { metric } from '../support/events';
import { acknowledgedIds, getJson, postEvents, waitFor } from '../support/http';
import { samplesNotStoredOnce } from '../support/read-back';
import { createTestDatabase } from '../support/postgres';
import { exactlyOnce, metricValue } from './queue-support';

/**
 * A storage that answers its probe query but refuses writes is not ready: /readyz and
 * sluice_storage_up follow the writer's failures, and come back with its first commit. Nothing
 * acknowledged is lost. Real faults: a SQLite file on a full tmpfs, a PostgreSQL database
 * switched to read-only.
 */

/** Sends batches until `stop` says so (bounded in count); returns the ids acknowledged (202 or 429 minus throttled). */
async function sendUntil(
  c: CollectorProcess,
  stop: () => Promise<boolean>,
  maxRequests: number,
): Promise<string[]> {
  const acknowledged: string[] = [];
  // Wide rows: a few hundred of them fill a small disk quickly.
  const pad = 'x'.repeat(500);
  for (let i = 0; i < maxRequests && !(await stop()); i++) {
    const batch = Array.from({ length: 200 }, () => metric('writes', { attributes: { a: pad, b: pad } }));
    acknowledged.push(...acknowledgedIds(batch, await postEvents(c.url, batch)));
  }
  return acknowledged;
}

const notReady = async (c: CollectorProcess) => (await getJson(`${c.url}/readyz`)).status === 503;
const ready = async (c: CollectorProcess) => (await getJson(`${c.url}/readyz`)).status === 200;

describe('storage refusing writes (SQLite on a full disk)', () => {
  const mount = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-full-'));
  const filler = path.join(mount, 'filler');
  let mounted = false;
  let c: CollectorProcess | undefined;

  beforeAll(() => {
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mount], { stdio: 'pipe' });
      mounted = true;
    } catch (err) {
      throw new Error(
        `This test mounts an 8 MiB tmpfs to fill it; run the tests as root (with CAP_SYS_ADMIN): ${String(err)}`,
        { cause: err },
      );
    }
  });

  afterAll(async () => {
    await c?.stop();
    if (mounted) execFileSync('umount', ['-l', mount]);
    fs.rmSync(mount, { recursive: true, force: true });
  });

  it('full: not ready and sluice_storage_up 0 while the probe query still answers; space back: ready within a second, every acknowledged event stored once', async () => {
    const file = path.join(mount, 'sluice.db');
    c = await startCollectorProcess({ SLUICE_SQLITE_PATH: file }, { defaults: 'user' });
    // Leave the database no room to grow.
    const fd = fs.openSync(filler, 'w');
    const chunk = Buffer.alloc(64 * 1024);
    try {
      for (;;) fs.writeSync(fd, chunk);
    } catch (err) {
      expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
    } finally {
      fs.closeSync(fd);
    }

    const acknowledged = await sendUntil(c, () => notReady(c as CollectorProcess), 200);
    expect(await notReady(c)).toBe(true);
    expect((await getJson(`${c.url}/readyz`)).body).toEqual({ status: 'storage_unavailable' });
    expect(await metricValue(c.url, 'sluice_storage_up')).toBe(0);
    // Reads still work: the probe query alone would say "up".
    expect((await getJson(`${c.url}/v1/events?limit=1`)).status).toBe(200);

    // An outage long enough for the writer's backoff to reach its cap.
    await waitFor(
      'six retries',
      async () => (await metricValue((c as CollectorProcess).url, 'sluice_write_retries_total')) >= 6,
      15_000,
    );
    fs.rmSync(filler);
    const freed = Date.now();
    await waitFor('ready once space is back', () => ready(c as CollectorProcess), 5000);
    const resumedMs = Date.now() - freed;
    expect(resumedMs).toBeLessThan(1500);
    expect(await metricValue(c.url, 'sluice_storage_up')).toBe(1);

    expect(await c.stop()).toBe(0);
    const db = new Database(file, { readonly: true });
    try {
      expect(acknowledged.length).toBeGreaterThan(0);
      expect(samplesNotStoredOnce(db, acknowledged)).toEqual([]);
    } finally {
      db.close();
    }
  });
});

describe('storage refusing writes (PostgreSQL read-only)', () => {
  it('read-only database: not ready while SELECT 1 succeeds; writable again: ready, every acknowledged event stored once', async () => {
    const db = await createTestDatabase('write_failures');
    const name = new URL(db.url).pathname.slice(1);
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    // The setting applies to new sessions: end the collector's, its pools reconnect.
    const readOnly = async (on: boolean) => {
      await admin.query(`ALTER DATABASE "${name}" SET default_transaction_read_only = ${on ? 'on' : 'off'}`);
      await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [name],
      );
    };
    let c: CollectorProcess | undefined;
    try {
      c = await startCollectorProcess({ SLUICE_DATABASE_URL: db.url }, { defaults: 'user' });
      await readOnly(true);
      const acknowledged = await sendUntil(c, () => notReady(c as CollectorProcess), 100);
      await waitFor('not ready', () => notReady(c as CollectorProcess), 5000);
      expect(await metricValue(c.url, 'sluice_storage_up')).toBe(0);
      expect((await getJson(`${c.url}/v1/events?limit=1`)).status).toBe(200);

      await readOnly(false);
      await waitFor('ready once writable', () => ready(c as CollectorProcess), 5000);
      await waitFor(
        'every acknowledged event stored',
        async () => (await exactlyOnce(db.url, acknowledged)) === null,
      );
      expect(acknowledged.length).toBeGreaterThan(0);
    } finally {
      await c?.stop();
      await admin.end();
      await db.drop();
    }
  });
});
