/**
 * The SDK in a real browser: Debian's headless Chromium (driven by
 * playwright-core) loads a page that imports the package's minified bundle
 * (sdk/dist/sluice-sdk.min.js) with `<script type="module">`. The page, the
 * bundle and `POST /v1/events` are served by one test server on 127.0.0.1,
 * which proxies the events to a real collector process: same origin, so no
 * CORS is involved (test/integration/sdk-package.test.ts covers CORS). Needs
 * `apt-get install -y chromium` and a build (`npm run build`).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { WireEvent } from '../../sdk/src';
import { launchChromium } from '../support/chromium';
import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { getJson, waitFor } from '../support/http';

/** The browser bundle, as built by `npm run build`. */
const BUNDLE = path.resolve(__dirname, '../../sdk/dist/sluice-sdk.min.js');

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>sluice sdk</title></head>
<body><script type="module">
  import * as Sluice from '/sluice-sdk.js';
  window.Sluice = Sluice;
</script></body></html>`;

interface Proxied {
  readonly encoding: string | undefined;
  readonly status: number;
  readonly bytes: number;
}

/** Serves the page and the bundle, and forwards `POST /v1/events` to the collector (or answers 503 while `down`). */
class PageServer {
  readonly requests: Proxied[] = [];
  down = false;
  private server: http.Server | undefined;
  url = '';

  constructor(
    private readonly bundle: string,
    private readonly collectorUrl: string,
  ) {}

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (req.method === 'GET' && req.url === '/')
      return void res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    if (req.method === 'GET' && req.url === '/sluice-sdk.js') {
      return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(this.bundle);
    }
    if (req.url === '/drop') return void req.socket.destroy(); // a fetch that fails, on the page's own origin
    if (req.method !== 'POST' || req.url !== '/v1/events') return void res.writeHead(404).end();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const encoding = req.headers['content-encoding'];
    if (this.down) {
      this.requests.push({ encoding, status: 503, bytes: body.length });
      return void res
        .writeHead(503, { 'retry-after': '1', 'content-type': 'application/json' })
        .end('{"error":"draining","message":"down"}');
    }
    const headers: Record<string, string> = {
      'content-type': req.headers['content-type'] ?? 'application/json',
    };
    if (encoding) headers['content-encoding'] = encoding;
    const upstream = await fetch(`${this.collectorUrl}/v1/events`, { method: 'POST', headers, body });
    const text = await upstream.text();
    this.requests.push({ encoding, status: upstream.status, bytes: body.length });
    const out: Record<string, string> = { 'content-type': 'application/json' };
    const retryAfter = upstream.headers.get('retry-after');
    if (retryAfter) out['retry-after'] = retryAfter;
    res.writeHead(upstream.status, out).end(text);
  }
}

let dir: string;
let collector: CollectorProcess;
let server: PageServer;
let browser: Browser;

async function storedEvents(app: string): Promise<WireEvent[]> {
  const res = await getJson(`${collector.url}/v1/events?${new URLSearchParams({ app, limit: '1000' })}`);
  if (res.status !== 200) throw new Error(`GET /v1/events: ${res.status}`);
  return res.body.events as WireEvent[];
}

function waitForStored(app: string, count: number, what: string): Promise<WireEvent[]> {
  return waitFor(
    what,
    async () => {
      const events = await storedEvents(app);
      return events.length >= count ? events : null;
    },
    15_000,
  );
}

async function openPage(): Promise<Page> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(server.url);
  await page.waitForFunction(() => typeof (window as unknown as { Sluice?: unknown }).Sluice === 'object');
  expect(errors).toEqual([]);
  return page;
}

/** Runs `createClient` in the page with the same-origin endpoint; the client is `window.client`. */
async function createPageClient(
  page: Page,
  options: Record<string, unknown>,
  persist = false,
): Promise<void> {
  await page.evaluate(
    ([opts, withStore]) => {
      const w = window as unknown as { Sluice: typeof import('../../sdk/src'); client: unknown };
      w.client = w.Sluice.createClient({
        endpoint: `${location.origin}/v1/events`,
        app: 'x',
        ...opts,
        ...(withStore ? { persistence: w.Sluice.localStorageStore('sluice.test') } : {}),
      } as Parameters<typeof w.Sluice.createClient>[0]);
    },
    [options, persist] as const,
  );
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'sluice-sdk-browser-'));
  collector = await startCollectorProcess({ SLUICE_SQLITE_PATH: path.join(dir, 'sluice.db') });
  server = new PageServer(await readFile(BUNDLE, 'utf8'), collector.url);
  await server.start();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await collector?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('SDK in headless Chromium', () => {
  it("sends a page's events to the collector, gzipped", async () => {
    const app = `browser-e2e-${process.pid}`;
    const page = await openPage();
    await createPageClient(page, {
      app,
      version: '2.0.0',
      env: 'test',
      flushIntervalMs: 100,
      aggregation: { windowMs: 1000 },
    });
    await page.evaluate(async () => {
      const client = (window as unknown as { client: import('../../sdk/src').Client }).client;
      client.lifecycle('page.loaded', { path: location.pathname });
      try {
        (null as unknown as { f(): void }).f(); // a real TypeError, with the browser's stack
      } catch (err) {
        client.error(err, { where: 'test' });
      }
      for (let i = 0; i < 30; i++)
        client.log('page.log', `line ${i} of a log that is long enough to be worth compressing`);
      for (let i = 0; i < 10; i++) client.metric('page.frame_ms', 16 + i);
      await client.flush();
    });
    const stored = await waitForStored(app, 33, 'the page events to be stored');
    const error = stored.find((e) => e.type === 'error')!;
    expect(error).toMatchObject({
      name: 'TypeError',
      source: { app, version: '2.0.0', env: 'test' },
      attributes: { where: 'test' },
    });
    expect(error.error?.stack).toContain('TypeError');
    expect(stored.find((e) => e.name === 'page.frame_ms_summary')).toMatchObject({
      summary: { count: 10, min: 16, max: 25, sum: 205, avg: 20.5 },
    });
    expect(stored.filter((e) => e.type === 'log')).toHaveLength(30);
    expect(server.requests.some((r) => r.encoding === 'gzip' && r.status === 202)).toBe(true);
    const stats = await page.evaluate(() =>
      (window as unknown as { client: import('../../sdk/src').Client }).client.stats(),
    );
    expect(stats).toMatchObject({ sent: 33, dynamicRate: 1, buffered: { total: 0 }, internalErrors: 0 });
    await page.close();
  });

  it('flushes when the page is hidden (visibilitychange)', async () => {
    const app = `browser-hide-${process.pid}`;
    const page = await openPage();
    await createPageClient(page, { app, flushIntervalMs: 600_000 });
    // Capture and hide in one task: no timer can send anything in between, and the request must
    // start within the hide event's own task (a page being hidden may run no later one).
    const [beforeHide, afterHide] = await page.evaluate(() => {
      const client = (window as unknown as { client: import('../../sdk/src').Client }).client;
      client.lifecycle('page.backgrounded');
      client.error(new Error('before hiding'));
      const before = client.stats();
      Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
      document.dispatchEvent(new Event('visibilitychange'));
      return [before, client.stats()];
    });
    expect(beforeHide).toMatchObject({ buffered: { total: 2 }, inFlight: 0 }); // nothing leaves on its own for 10 minutes
    expect(afterHide).toMatchObject({ buffered: { total: 0 }, inFlight: 2 });
    const stored = await waitForStored(app, 2, 'the events flushed on visibilitychange');
    expect(stored.map((e) => e.type).sort()).toEqual(['error', 'lifecycle']);
    await page.close();
  });

  it('flushes when the page is closed (pagehide, keepalive outlives the page)', async () => {
    const app = `browser-close-${process.pid}`;
    const page = await openPage();
    await createPageClient(page, { app, flushIntervalMs: 600_000 });
    await page.evaluate(() => {
      const client = (window as unknown as { client: import('../../sdk/src').Client }).client;
      for (let i = 0; i < 5; i++) client.log('page.log', `last words ${i}`);
      client.metric('page.frame_ms', 16); // its open window closes on the way out
    });
    await page.close({ runBeforeUnload: true });
    const stored = await waitForStored(app, 6, 'the events flushed on pagehide');
    expect(stored.map((e) => e.name).sort()).toEqual(['page.frame_ms_summary', ...Array(5).fill('page.log')]);
  });

  it('keeps events in localStorage while the collector is away, and sends them after a reload', async () => {
    const app = `browser-persist-${process.pid}`;
    const page = await openPage();
    server.down = true;
    try {
      await createPageClient(page, { app, flushIntervalMs: 600_000 }, true);
      await page.evaluate(async () => {
        const client = (window as unknown as { client: import('../../sdk/src').Client }).client;
        client.error(new Error('offline 1'));
        client.error(new Error('offline 2'));
        await client.flush({ timeoutMs: 500 }); // 503 until the deadline: stays buffered, and saved
      });
      const saved = await page.evaluate(
        () => JSON.parse(localStorage.getItem('sluice.test') ?? '[]') as WireEvent[],
      );
      expect(saved.map((e) => e.error?.message)).toEqual(['offline 1', 'offline 2']);
      await page.reload();
      server.down = false;
      await page.waitForFunction(
        () => typeof (window as unknown as { Sluice?: unknown }).Sluice === 'object',
      );
      await createPageClient(page, { app, flushIntervalMs: 600_000 }, true);
      await page.evaluate(() =>
        (window as unknown as { client: import('../../sdk/src').Client }).client.flush(),
      );
      const stored = await waitForStored(app, 2, 'the saved events to be stored after the reload');
      expect(stored.map((e) => e.id).sort()).toEqual(saved.map((e) => e.id).sort());
      expect(await page.evaluate(() => localStorage.getItem('sluice.test'))).toBeNull();
    } finally {
      server.down = false;
      await page.close();
    }
  });

  it('says a failed fetch to another origin is often CORS, naming SLUICE_CORS_ORIGINS', async () => {
    // The page (the test server) and the collector differ by port: another origin, and the
    // collector runs with the defaults, without SLUICE_CORS_ORIGINS.
    const page = await openPage();
    const message = await page.evaluate(async (endpoint) => {
      const w = window as unknown as { Sluice: typeof import('../../sdk/src') };
      const seen: string[] = [];
      const client = w.Sluice.createClient({
        endpoint,
        app: 'x',
        flushIntervalMs: 600_000,
        onError: (err) => seen.push(`${err.code}: ${err.message}`),
      });
      client.lifecycle('page.loaded');
      await client.flush({ timeoutMs: 300 });
      await client.close({ timeoutMs: 0 });
      return seen[0] ?? '';
    }, `${collector.url}/v1/events`);
    expect(message).toMatch(/^unreachable: collector unreachable at /);
    expect(message).toContain('different origins');
    expect(message).toContain('SLUICE_CORS_ORIGINS');
    await page.close();
  });

  it('does not blame CORS when the collector on its own origin is away', async () => {
    const page = await openPage();
    const message = await page.evaluate(async () => {
      const w = window as unknown as { Sluice: typeof import('../../sdk/src') };
      const seen: string[] = [];
      // The test server drops this path's connection: a fetch that fails on the page's own origin.
      const client = w.Sluice.createClient({
        endpoint: `${location.origin}/drop`,
        app: 'x',
        flushIntervalMs: 600_000,
        onError: (err) => seen.push(`${err.code}: ${err.message}`),
      });
      client.lifecycle('page.loaded');
      await client.flush({ timeoutMs: 300 });
      await client.close({ timeoutMs: 0 });
      return seen[0] ?? '';
    });
    expect(message).toMatch(/^unreachable: /);
    expect(message).not.toContain('SLUICE_CORS_ORIGINS');
    await page.close();
  });
});
