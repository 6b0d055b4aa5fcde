/**
 * @sentry/browser in a real browser: Debian's headless Chromium (driven by playwright-core) loads
 * a page from one origin whose Sentry SDK (bundled from npm's @sentry/browser by esbuild) sends to
 * a collector on another: the SDK's fetch is a cross-origin request with `sentry_key` in the
 * query, allowed by `SLUICE_CORS_ORIGINS`. Needs `apt-get install -y chromium`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { waitFor } from '../support/http';
import { startInProcess, type InProcessCollector } from '../support/in-process';
import { tempSqlitePath } from '../support/postgres';
import { storedEvents } from './otlp-support';
import { dsnOf, uuidOf } from './sentry-support';

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>sentry</title></head>
<body><script src="/sentry.js"></script></body></html>`;

describe('@sentry/browser in Chromium, cross-origin', () => {
  let page: http.Server;
  let pageOrigin = '';
  let c: InProcessCollector;
  let browser: Browser;

  beforeAll(async () => {
    const bundle = await build({
      stdin: {
        contents: "import * as Sentry from '@sentry/browser'; window.Sentry = Sentry;",
        resolveDir: __dirname,
      },
      bundle: true,
      format: 'iife',
      write: false,
      logLevel: 'silent',
    });
    const script = bundle.outputFiles[0]?.text ?? '';
    page = http.createServer((req, res) => {
      if (req.url === '/') res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
      else if (req.url === '/sentry.js')
        res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    pageOrigin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
    c = await startInProcess(
      { SLUICE_SQLITE_PATH: tempSqlitePath('sentry-browser'), SLUICE_CORS_ORIGINS: pageOrigin },
      { defaults: 'user' },
    );
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await c?.stop();
    page?.closeAllConnections();
    await new Promise<void>((resolve) => (page ? page.close(() => resolve()) : resolve()));
  });

  it('sends an exception that is stored with its type, message, stack, release and environment', async () => {
    const tab = await browser.newPage();
    await tab.goto(`${pageOrigin}/`);
    const dsn = dsnOf(c.url, 'browserkey', 77);
    const result = await tab.evaluate(async (dsn) => {
      const S = (window as any).Sentry;
      const statuses: number[] = [];
      S.init({
        dsn,
        release: 'web@3.0.0',
        environment: 'browser-test',
        transport: (options: unknown) => {
          const inner = S.makeFetchTransport(options);
          return {
            ...inner,
            send: async (envelope: unknown) => {
              const res = await inner.send(envelope);
              statuses.push(res.statusCode);
              return res;
            },
          };
        },
      });
      function renderCart(): never {
        throw new RangeError('cart has -1 items');
      }
      let id = '';
      try {
        renderCart();
      } catch (err) {
        id = S.captureException(err);
      }
      await S.flush(10_000);
      return { id, statuses };
    }, dsn);
    await tab.close();
    expect(result.statuses.length).toBeGreaterThan(0);
    for (const s of result.statuses) expect(s).toBe(200);

    const events = await waitFor('the exception', async () => {
      const e = await storedEvents(c.url, 'sentry-77', '&type=error');
      return e.length >= 1 ? e : null;
    });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      id: uuidOf(result.id),
      type: 'error',
      source: { app: 'sentry-77', version: 'web@3.0.0', env: 'browser-test' },
      error: { kind: 'RangeError', message: 'cart has -1 items' },
      attributes: { 'sentry.platform': 'javascript' },
    });
    expect(events[0].error.stack).toMatch(/^RangeError: cart has -1 items\n {4}at renderCart \(/);
  });
});
