import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateKey } from '../../src/auth/api-keys';
import { startCollectorProcess } from '../support/collector-process';
import { waitFor } from '../support/http';
import { lossMap } from '../support/loss-map';
import { tempSqlitePath } from '../support/postgres';
import { uniqueApp } from './otlp-support';

/** Most requests the flood sends, and longest it runs: the bounds of this load loop. */
const MAX_REQUESTS = 4000;
const MAX_MS = 20_000;

/**
 * Sentry requests refused unread (429 `overloaded`) with auth on and the defaults a user gets: a
 * collector process flooded by more concurrent Sentry senders than it can serve sheds them, and
 * the loss map counts each in the app of the DSN key it presented (`?sentry_key=` as the
 * JavaScript SDKs send it, `X-Sentry-Auth` as the others do), none in app ''.
 */
describe('Sentry requests shed unread', () => {
  it("are counted in the app of their DSN key, not in app ''", async () => {
    const app = uniqueApp('sentry-flood');
    const keysFile = path.join(os.tmpdir(), `sentry-shed-keys-${process.pid}-${Date.now()}.json`);
    const ingest = generateKey('ingest', 'flood_dsn', app);
    const read = generateKey('read', 'reader');
    writeFileSync(keysFile, JSON.stringify({ keys: [ingest.entry, read.entry] }));
    const c = await startCollectorProcess(
      { SLUICE_SQLITE_PATH: tempSqlitePath('sentry_shed'), SLUICE_AUTH_KEYS_FILE: keysFile },
      { defaults: 'user' },
    );
    const readHeaders = { 'x-api-key': read.secret };
    const now = Date.now() / 1000;
    const logs = Array.from({ length: 100 }, (_, i) => ({
      timestamp: now,
      level: 'info',
      body: `item ${i}`,
    }));
    const envelope = `{}\n{"type":"log","item_count":100}\n${JSON.stringify({ items: logs })}\n`;
    let overloaded = 0;
    let sent = 0;
    let stop = false;
    const deadline = Date.now() + MAX_MS;
    const worker = async (n: number): Promise<void> => {
      while (!stop && sent < MAX_REQUESTS && Date.now() < deadline) {
        sent++;
        const res =
          n % 2 === 0
            ? await fetch(`${c.url}/api/1/envelope/?sentry_key=flood_dsn&sentry_version=7`, {
                method: 'POST',
                body: envelope,
              })
            : await fetch(`${c.url}/api/1/envelope/`, {
                method: 'POST',
                headers: { 'x-sentry-auth': 'Sentry sentry_version=7, sentry_key=flood_dsn' },
                body: envelope,
              });
        const body = (await res.json()) as { error?: string };
        if (res.status === 429 && body.error === 'overloaded') overloaded++;
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
      await waitFor(
        'the shed requests in the loss map',
        async () => (await lossMap(c.url, app, '', readHeaders)).shed_requests === overloaded,
        10_000,
      ).catch(async (err: Error) => {
        throw new Error(
          `${err.message}; answered overloaded ${overloaded}; ${JSON.stringify(await lossMap(c.url, app, '', readHeaders))}`,
        );
      });
      expect((await lossMap(c.url, '', '', readHeaders)).shed_requests).toBe(0);
    } finally {
      await c.stop();
    }
    process.stdout.write(`sentry shed: ${sent} requests, ${overloaded} shed\n`);
  }, 60_000);
});
