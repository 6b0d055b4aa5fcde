/**
 * `sluice tail` as a user runs it, against a real collector with its defaults: each event is
 * printed once, oldest first, however many reads find nothing new, and an event stored late
 * (within --lateness) is printed once when it arrives. The reads go through a counting proxy so
 * the test waits for a number of reads, not for a time.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort } from '../../src/dev-cluster/free-port';
import { log, type WireEvent } from '../support/events';
import { getJson, postEvents, waitFor } from '../support/http';
import { tempSqlitePath } from '../support/postgres';
import { CLI } from '../support/run-cli';
import { spawnSluice, waitUntilReady, type SluiceProcess } from '../support/sluice-process';

/** Forwards GETs to `upstream` and counts the reads of /v1/events. */
async function countingProxy(upstream: string): Promise<{ url: string; reads: () => number; close(): void }> {
  let reads = 0;
  const server = http.createServer((req, res) => {
    if (req.url?.startsWith('/v1/events')) reads += 1;
    fetch(`${upstream}${req.url ?? '/'}`, { headers: { accept: 'application/json' } })
      .then(async (up) => {
        res.writeHead(up.status, { 'content-type': 'application/json' });
        res.end(await up.text());
      })
      .catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    reads: () => reads,
    close: () => server.close(),
  };
}

describe('sluice tail', () => {
  let collector: SluiceProcess;
  let url: string;

  beforeAll(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    collector = spawnSluice('serve', {
      SLUICE_SQLITE_PATH: tempSqlitePath('cli_tail'),
      SLUICE_PORT: String(port),
      SLUICE_OTLP_PORT: '0',
      SLUICE_DRAIN_DELAY_MS: '0',
    });
    await waitUntilReady(collector, 'collector', url, 20_000);
  });

  afterAll(async () => {
    await collector?.stop();
  });

  const stored = async (ids: unknown[]) => {
    const events = (await getJson(`${url}/v1/events?app=tailed&limit=1000`)).body.events as WireEvent[];
    return ids.every((id) => events.some((e) => e.id === id));
  };

  it('prints each event once, in order, late ones within --lateness included', async () => {
    const now = Date.now();
    const a = log('tailed', { ts: now - 40_000, message: 'forty seconds ago' });
    const b = log('tailed', { ts: now, message: 'now' });
    expect((await postEvents(url, [b, a])).status).toBe(202);
    await waitFor('A and B to be stored', () => stored([a.id, b.id]));

    const proxy = await countingProxy(url);
    const tail = spawn(
      process.execPath,
      [CLI, 'tail', '--app', 'tailed', '--interval', '50ms', '--json', '--url', proxy.url],
      { env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    tail.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    tail.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    const exited = new Promise<number | null>((resolve) => tail.once('exit', (code) => resolve(code)));
    const printedIds = () =>
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as WireEvent).id);
    const severalMoreReads = async () => {
      const after = proxy.reads() + 6;
      await waitFor('six more reads', () => proxy.reads() >= after);
    };
    try {
      await waitFor('tail to print B', () => out.includes(String(b.id)));
      await severalMoreReads();
      expect(printedIds()).toEqual([a.id, b.id]);

      // A late event (10 s behind the newest shown, within the default 30 s) and a new one.
      const late = log('tailed', { ts: Number(b.ts) - 10_000, message: 'late' });
      const c = log('tailed', { ts: Date.now() + 1, message: 'new' });
      expect((await postEvents(url, [c, late])).status).toBe(202);
      await waitFor('tail to print the late event and C', () =>
        [late.id, c.id].every((id) => out.includes(String(id))),
      );
      await severalMoreReads();
      expect(printedIds()).toEqual([a.id, b.id, late.id, c.id]);
    } finally {
      tail.kill('SIGINT');
      proxy.close();
    }
    expect(await exited).toBe(0);
    expect(err).toBe('');
  });
});
