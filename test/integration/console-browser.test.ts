/**
 * The web console in a real browser (Debian's Chromium through playwright-core), against collector
 * processes as `npm start` runs them (default settings; `npm run build` makes dist/ and the console
 * bundle): SQLite with API keys off, PostgreSQL with API keys on. Each holds an hour of generated
 * telemetry of two apps, written to its storage. Every view is opened, filters are applied, the
 * chart's points are compared with what the read API answers, and no page error or unexpected
 * console error may appear. With TEST_CONSOLE_SCREENSHOTS=<folder>, a screenshot of each view is
 * written there (docs/console/ holds the committed ones).
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, ConsoleMessage, Page, Request } from 'playwright-core';
import { generateKey } from '../../src/auth/api-keys';
import { systemClock } from '../../src/clock';
import { createLogger } from '../../src/log/logger';
import type { Storage } from '../../src/storage/port';
import { createSqliteStorage } from '../../src/storage/sqlite';
import { launchChromium } from '../support/chromium';
import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { appHour } from '../support/console-data';
import { log, metric } from '../support/events';
import { postEvents, waitFor } from '../support/http';
import { createClient } from '../../sdk/src';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { openPostgresStorage, writeEvents } from '../support/storage';

const SCREENSHOTS = process.env.TEST_CONSOLE_SCREENSHOTS;
const APPS = ['web-shop', 'checkout-api'] as const;
const logger = createLogger('silent');

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

interface Setup {
  readonly collector: CollectorProcess;
  /** The read key the console is given (null: API keys off). */
  readonly readKey: string | null;
  /** The ingest key of `web-shop` (null: API keys off). */
  readonly ingestKey: string | null;
  close(): Promise<void>;
}

async function sqliteSetup(dir: string): Promise<Setup> {
  const file = path.join(dir, 'sluice.db');
  const collector = await startCollectorProcess({ SLUICE_SQLITE_PATH: file }, { defaults: 'user' });
  await fill(createSqliteStorage({ path: file, clock: systemClock, logger }));
  return { collector, readKey: null, ingestKey: null, close: async () => void (await collector.stop()) };
}

async function postgresSetup(dir: string): Promise<Setup> {
  const db: TestDatabase = await createTestDatabase('console');
  const read = generateKey('read', 'console');
  const ingest = generateKey('ingest', 'shop', 'web-shop');
  const keys = path.join(dir, 'keys.json');
  writeFileSync(keys, JSON.stringify({ keys: [read.entry, ingest.entry] }));
  const collector = await startCollectorProcess(
    { SLUICE_DATABASE_URL: db.url, SLUICE_AUTH_KEYS_FILE: keys },
    { defaults: 'user' },
  );
  await fill(openPostgresStorage(db.url));
  return {
    collector,
    readKey: read.secret,
    ingestKey: ingest.secret,
    close: async () => {
      await collector.stop();
      await db.drop();
    },
  };
}

/** An hour of both apps' telemetry, written to the collector's storage as its writer would. */
async function fill(storage: Storage): Promise<void> {
  const now = Date.now();
  try {
    for (const [i, app] of APPS.entries()) await writeEvents(storage, appHour(app, now, 20_000, i + 1));
  } finally {
    await storage.close();
  }
}

describe.each([
  ['SQLite, API keys off', sqliteSetup],
  ['PostgreSQL, API keys on', postgresSetup],
])('the console (%s)', (_name, setup) => {
  let dir: string;
  let s: Setup;
  let page: Page;
  const errors: string[] = [];
  const apiRequests: Request[] = [];
  const origins = new Set<string>();

  /** The read API as a script reads it, with the same key as the console. */
  async function api(pathAndQuery: string): Promise<any> {
    const res = await fetch(`${s.collector.url}${pathAndQuery}`, {
      headers: s.readKey === null ? {} : { authorization: `Bearer ${s.readKey}` },
    });
    expect(res.status).toBe(200);
    return res.json();
  }

  async function open(hash: string, ready: string): Promise<void> {
    await page.goto(`${s.collector.url}/${hash}`);
    await page.waitForSelector(ready);
  }

  /** Pictures of the views come from the run with keys off; the key form from the other. */
  async function screenshot(name: string): Promise<void> {
    if (SCREENSHOTS === undefined || (s.readKey === null) === (name === 'key')) return;
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });
  }

  /** Network answers the console expects: 401s before a key is given. */
  function expected(msg: ConsoleMessage): boolean {
    const text = msg.text();
    if (!text.startsWith('Failed to load resource')) return false;
    return /status of 401/.test(text) && s.readKey !== null;
  }

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sluice-console-'));
    s = await setup(dir);
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('pageerror', (err) => errors.push(`page error: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error' && !expected(msg))
        errors.push(`console: ${msg.text()} (${msg.location().url})`);
    });
    page.on('request', (r) => {
      origins.add(new URL(r.url()).origin);
      const p = new URL(r.url()).pathname;
      if (p.startsWith('/v1/') || p === '/pipeline') apiRequests.push(r);
    });
  }, 60_000);

  afterAll(async () => {
    await page?.close();
    await s?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  afterEach(() => {
    expect(errors).toEqual([]);
    // No third-party request: everything the page loads or calls is on the collector's origin.
    const own = new URL(s.collector.url).origin;
    expect([...origins].filter((o) => o !== own && o !== 'null')).toEqual([]);
  });

  it('is one page with a strict Content-Security-Policy, at most 150 KiB to download (gzip)', async () => {
    const pageAnswer = await fetch(`${s.collector.url}/`, { headers: { 'accept-encoding': 'gzip' } });
    expect(pageAnswer.headers.get('content-security-policy')).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    const html = await pageAnswer.text();
    const files = [...html.matchAll(/(?:src|href)="(\/console\/[^"]+)"/g)].map((m) => m[1] as string);
    expect(files).toHaveLength(2);
    let bytes = Number(pageAnswer.headers.get('content-length'));
    for (const f of files) {
      const res = await fetch(`${s.collector.url}${f}`, { headers: { 'accept-encoding': 'gzip' } });
      expect(res.headers.get('content-encoding')).toBe('gzip');
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      bytes += Number(res.headers.get('content-length'));
    }
    expect(bytes).toBeLessThanOrEqual(150 * 1024);
  });

  it('shows no data before a read key is given when keys are on, then sends it on every call', async () => {
    await page.goto(`${s.collector.url}/`);
    if (s.readKey === null) {
      await page.waitForSelector('[data-figure="accepted"]');
      expect(await page.locator('.key-form').count()).toBe(0);
      return;
    }
    await page.waitForSelector('.key-form');
    expect(await page.locator('[data-figure]').count()).toBe(0);
    await screenshot('key');
    await page.fill('.key-form input[name="key"]', 'sk_rd_not-a-key');
    await page.click('.key-form button[type="submit"]');
    await page.waitForSelector('.key-form');
    expect(await page.locator('[data-figure]').count()).toBe(0);
    const keyGivenAt = apiRequests.length;
    await page.fill('.key-form input[name="key"]', s.readKey);
    await page.click('.key-form button[type="submit"]');
    await page.waitForSelector('[data-figure="accepted"]');
    const sent = apiRequests.slice(keyGivenAt);
    expect(sent.length).toBeGreaterThan(0);
    for (const r of sent) expect(r.headers().authorization).toBe(`Bearer ${s.readKey}`);
  });

  it('words a refused key for a person, and the header shows the key refused, not set', async () => {
    if (s.readKey === null || s.ingestKey === null) return;
    await page.goto(`${s.collector.url}/`);
    await page.waitForSelector('.key-status button');
    await page.click('.key-status button'); // Forget
    await page.waitForSelector('.key-form');
    const raw = /X-Api-Key|Authorization|Bearer|\(API key/;
    const asked = await page.textContent('.key-form');
    expect(asked).toContain('read key');
    expect(asked).not.toMatch(raw);
    expect(await page.textContent('.key-status')).not.toContain('Read key set');

    // An ingest key: refused, and said so in words; the header no longer says a key is set.
    await page.fill('.key-form input[name="key"]', s.ingestKey);
    await page.click('.key-form button[type="submit"]');
    await page.waitForSelector('.key-form [data-refused]');
    const refused = await page.textContent('.key-form');
    expect(refused).toContain('ingest key');
    expect(refused).not.toMatch(raw);
    expect(await page.textContent('.key-status')).toBe('Read key refused');
    expect(await page.evaluate(() => sessionStorage.getItem('sluice.console.readKey'))).toBeNull();

    // A key that is no key of this collector.
    await page.fill('.key-form input[name="key"]', 'sk_rd_not-a-key');
    await page.click('.key-form button[type="submit"]');
    await page.waitForFunction(
      () => document.querySelector('.key-form [data-refused]')?.getAttribute('data-refused') === 'not_valid',
    );
    expect(await page.textContent('.key-form')).not.toMatch(raw);
    expect(await page.textContent('.key-status')).toBe('Read key refused');

    await page.fill('.key-form input[name="key"]', s.readKey);
    await page.click('.key-form button[type="submit"]');
    await page.waitForSelector('[data-figure="accepted"]');
    expect(await page.textContent('.key-status')).toContain('Read key set');
  });

  it('draws the pipeline, live, from GET /pipeline', async () => {
    // A little traffic through the API, so the busiest apps have a row.
    const headers: Record<string, string> = s.ingestKey === null ? {} : { 'x-api-key': s.ingestKey };
    expect((await postEvents(s.collector.url, [log('web-shop'), log('web-shop')], { headers })).status).toBe(
      202,
    );
    await open('#/pipeline', '[data-figure="accepted"]');
    const state = await api('/pipeline');
    await page.waitForSelector('[data-health="storage"]');
    expect(await page.textContent('[data-health="storage"]')).toBe('storage: up');
    expect(await page.textContent('[data-health="ready"]')).toBe('ready: yes');
    for (const lane of state.lanes) {
      expect(await page.textContent('[data-view="pipeline"]')).toContain(
        `/ ${lane.capacity.toLocaleString('en-US')} events`,
      );
    }
    // Redrawn every second from a new sample.
    const first = await page.getAttribute('[data-view="pipeline"]', 'data-sampled-at');
    await page.waitForFunction(
      (before) =>
        document.querySelector('[data-view="pipeline"]')?.getAttribute('data-sampled-at') !== before,
      first,
    );
    await page.waitForSelector('text=web-shop', { timeout: 10_000 });
    if (SCREENSHOTS !== undefined) {
      // For the picture: a few seconds of traffic, one app above its rate limit (100/s).
      for (let second = 0; second < 8; second++) {
        const started = Date.now();
        await postEvents(
          s.collector.url,
          Array.from({ length: 150 }, () => log('web-shop')),
          { headers },
        );
        await postEvents(
          s.collector.url,
          Array.from({ length: 40 }, () => log('checkout-api')),
        );
        await new Promise((r) => setTimeout(r, Math.max(0, 1000 - (Date.now() - started))));
      }
    }
    await screenshot('pipeline');
  });

  it('lists events, applies filters, opens one in full and groups the errors', async () => {
    await open('#/events?app=web-shop', 'table.events tbody tr');
    const ids = async () =>
      page.$$eval('table.events tbody tr', (rows) => rows.map((r) => r.getAttribute('data-id')));
    const first = await api('/v1/events?app=web-shop&limit=50');
    expect(await ids()).toEqual(first.events.map((e: any) => e.id));

    // Filters through the form, as a person applies them.
    await page.waitForSelector('form.filters button[type="submit"]');
    await page.selectOption('form.filters select[name="type"]', 'error');
    await page.fill('form.filters input[name="env"]', 'prod');
    await page.fill('form.filters input[name="attr"]', 'status=500');
    await page.fill('form.filters input[name="text"]', 'DECLINED');
    await page.click('form.filters button[type="submit"]');
    await page.waitForFunction(() => location.hash.includes('text=DECLINED'));
    const filtered = await api(
      '/v1/events?app=web-shop&type=error&env=prod&attr.status=500&text=DECLINED&limit=50',
    );
    expect(filtered.events.length).toBeGreaterThan(0);
    await waitFor('the filtered rows', async () => (await ids()).length === filtered.events.length);
    expect(await ids()).toEqual(filtered.events.map((e: any) => e.id));

    // One event in full: attributes and stack.
    await page.click('table.events tbody tr');
    const shown = filtered.events[0];
    await page.waitForSelector(`.detail[data-event="${shown.id}"]`);
    expect(await page.textContent('.detail pre.stack')).toBe(shown.error.stack);
    expect(await page.textContent('.detail')).toContain('status');

    // Errors grouped by kind and fingerprint, as GET /v1/error-groups answers for the view's filters.
    expect((await api('/v1/error-groups?app=web-shop')).groups.map((g: any) => g.kind).sort()).toEqual([
      'NotFound',
      'PaymentError',
      'TypeError',
    ]);
    const groups = await api('/v1/error-groups?app=web-shop&env=prod');
    await page.waitForSelector('.groups tbody tr');
    expect(
      await page.$$eval('.groups tbody tr', (rows) => rows.map((r) => r.getAttribute('data-fingerprint'))),
    ).toEqual(groups.groups.map((g: any) => g.fingerprint));
    await screenshot('events');
    await page.click('.groups tbody tr');
    await page.waitForSelector(`.detail[data-event="${groups.groups[0].last_id}"]`);
  });

  it('charts a metric with the values the read API returns, by the name the app wrote', async () => {
    for (const [name, stat] of [
      ['http.latency_ms', 'avg'],
      // Stored as render.frame_drop_summary by the SDK: read back as written.
      ['render.frame_drop', 'max'],
    ] as const) {
      await open(`#/metrics?app=web-shop&name=${name}&resolution=raw&stat=${stat}&range=1h`, '.chart canvas');
      const answer = await api(
        `/v1/metrics?app=web-shop&name=${name}&resolution=raw&from=${Date.now() - 3_700_000}&limit=10000`,
      );
      const drawn = await page.$$eval('table.points tbody tr', (rows) =>
        rows.map((r) => [Number(r.getAttribute('data-ts')), Number(r.getAttribute('data-value'))]),
      );
      const fromApi = answer.points.map((p: any) => [p.ts, p[stat]]);
      // The console asked for the last hour a moment later: its points are the API's, less any that left the window.
      expect(drawn.length).toBeGreaterThan(20);
      expect(fromApi.slice(fromApi.length - drawn.length)).toEqual(drawn);
      // The canvas holds a drawn line: pixels of the series' colour.
      const coloured = await page.$eval('.chart canvas', (c) => {
        const canvas = c as HTMLCanvasElement;
        const data = canvas.getContext('2d')?.getImageData(0, 0, canvas.width, canvas.height).data ?? [];
        let n = 0;
        for (let i = 0; i < data.length; i += 4) if (data[i + 2]! > 200 && data[i]! < 80) n++;
        return n;
      });
      expect(coloured).toBeGreaterThan(100);
      if (name === 'http.latency_ms') await screenshot('metrics');
    }
    // The names listed for the app are the API's, by written name, with their kinds.
    const names = await api('/v1/metrics/names?app=web-shop');
    expect(names.names.map((n: any) => [n.name, n.kinds])).toEqual([
      ['http.latency_ms', ['sample']],
      ['render.frame_drop', ['summary']],
    ]);
    // Offered by the metric picker (a search over the same list).
    const options = await page.$eval('input[name="name"]', (i) =>
      [...((i as HTMLInputElement).list?.options ?? [])].map((o) => o.value),
    );
    expect(options).toEqual(['http.latency_ms', 'render.frame_drop']);
  });

  it('draws the chosen range on the x axis, ticks labelled for it, however few the points', async () => {
    const headers: Record<string, string> = s.ingestKey === null ? {} : { 'x-api-key': s.ingestKey };
    const name = 'chart.two_points';
    const now = Date.now();
    const points = [now - 180_000, now - 120_000].map((ts, i) =>
      metric('web-shop', { name, ts, value: i + 1 }),
    );
    expect((await postEvents(s.collector.url, points, { headers })).status).toBe(202);
    await waitFor(
      'the two points',
      async () =>
        (await api(`/v1/metrics?app=web-shop&name=${name}&resolution=raw&from=${now - 600_000}`)).points
          .length === 2,
    );
    for (const [range, spanMs, label] of [
      ['1h', 3_600_000, /^\d\d:\d\d$/],
      ['24h', 24 * 3_600_000, /^(\d\d-\d\d )?\d\d:\d\d$/],
      ['7d', 7 * 24 * 3_600_000, /^(\d\d-\d\d|\d\d-\d\d \d\d:\d\d|\d\d:\d\d)$/],
    ] as const) {
      await open(
        `#/metrics?app=web-shop&name=${name}&resolution=raw&stat=avg&range=${range}`,
        '.chart canvas',
      );
      await page.waitForSelector('.chart[data-x-ticks]');
      const axis = await page.$eval('.chart', (c) => ({
        from: Number(c.getAttribute('data-x-from')),
        to: Number(c.getAttribute('data-x-to')),
        ticks: (c.getAttribute('data-x-ticks') ?? '').split('|'),
      }));
      // The whole range chosen, ending now (not the 60 s between the two points).
      expect(axis.to - axis.from).toBe(spanMs);
      expect(Math.abs(axis.to - Date.now())).toBeLessThan(60_000);
      expect(axis.ticks.length).toBeGreaterThanOrEqual(3);
      for (const tick of axis.ticks) expect(tick).toMatch(label);
      // Past a day, the date is shown (on each day's first tick at least).
      if (range !== '1h') expect(axis.ticks.some((t) => /^\d\d-\d\d/.test(t))).toBe(true);
    }
  });

  it('draws the loss map of an app as a flow from generated to stored, as GET /v1/outcomes answers it', async () => {
    // An app through the real SDK: sampled (static rate), invalid captures, a small buffer. With keys
    // on, the ingest key's app (whose hour of fixture rows was written straight to storage).
    const app = s.ingestKey === null ? 'checkout-web' : 'web-shop';
    const client = createClient({
      endpoint: `${s.collector.url}/v1/events`,
      app,
      ...(s.ingestKey === null ? {} : { apiKey: s.ingestKey }),
      sampleRate: 0.8,
      buffer: { maxEvents: 40 },
      onError: () => {},
    });
    for (let i = 0; i < 60; i++) {
      client.log('cart.updated', `item ${i}`);
      if (i % 10 === 0) client.metric('render.frame_drop', Number.NaN);
    }
    await client.close();
    const to = Date.now() + 60_000;
    const window = `from=${to - 24 * 3_600_000}&to=${to}`;
    // 60 events; the NaN samples of the (aggregated) metric are counted apart, in samples.
    await waitFor('the loss map to hold the SDK', async () => {
      const m = await api(`/v1/outcomes?app=${app}&${window}`);
      return m.pending.sdk === 0 && m.generated >= 60 && (m.dropped_samples.invalid ?? 0) >= 6;
    });
    await open(`#/loss?app=${app}&range=24h`, '[data-identity]');
    const answer = await api(`/v1/outcomes?app=${app}&${window}`);
    const drawn = await page.$$eval('[data-flow]', (rows) =>
      Object.fromEntries(
        rows.map((r) => [r.getAttribute('data-flow'), Number(r.getAttribute('data-count'))]),
      ),
    );
    expect(drawn.generated).toBe(answer.generated);
    expect(drawn.stored).toBe(answer.stored);
    if (answer.pending.sdk >= 0 && answer.pending.pipeline >= 0) {
      expect(drawn['pending:sdk']).toBe(answer.pending.sdk);
      expect(drawn['pending:pipeline']).toBe(answer.pending.pipeline);
    } else {
      expect(drawn['pending:in-flight']).toBe(Math.max(0, answer.pending.sdk + answer.pending.pipeline));
    }
    for (const [stage, reasons] of Object.entries(answer.losses as Record<string, Record<string, number>>))
      for (const [reason, n] of Object.entries(reasons)) expect(drawn[`lost:${stage}:${reason}`]).toBe(n);
    expect(await page.getAttribute('[data-identity]', 'data-identity')).toBe('holds');
    await screenshot('loss-map');
  });

  it('never shows a negative pending share: events stored before their SDK reported them sent are in flight', async () => {
    const app = s.ingestKey === null ? 'checkout-inflight' : 'web-shop';
    const client = createClient({
      endpoint: `${s.collector.url}/v1/events`,
      app,
      ...(s.ingestKey === null ? {} : { apiKey: s.ingestKey }),
      flushIntervalMs: 600_000,
      onError: () => {},
    });
    const to = Date.now() + 60_000;
    const window = `from=${to - 24 * 3_600_000}&to=${to}`;
    try {
      for (let i = 0; i < 30; i++) client.log('cart.updated', `item ${i}`);
      // Sent and stored; the report that they were delivered leaves with the SDK's next request.
      await client.flush();
      const answer = await waitFor('stored ahead of the SDK report', async () => {
        const a = await api(`/v1/outcomes?app=${app}&${window}`);
        return a.pending.pipeline < 0 ? a : null;
      });
      await open(`#/loss?app=${app}&range=24h`, '[data-identity]');
      const rows = await page.$$eval('[data-flow]', (els) => els.map((r) => r.textContent ?? ''));
      expect(rows.filter((t) => /[−-]\d/.test(t))).toEqual([]);
      expect(await page.textContent('[data-view="loss"]')).toContain('in flight');
      const inFlight = Number(await page.getAttribute('[data-flow="pending:in-flight"]', 'data-count'));
      expect(inFlight).toBe(Math.max(0, answer.pending.sdk + answer.pending.pipeline));
      expect(await page.getAttribute('[data-identity]', 'data-identity')).toBe('holds');
    } finally {
      await client.close();
    }
  });

  it('picks an app by search: the picker asks GET /v1/apps for the names that start with what is typed', async () => {
    await open('#/loss', 'input[name="app"]');
    const offered = () =>
      page.$eval('input[name="app"]', (i) =>
        [...((i as HTMLInputElement).list?.options ?? [])].map((o) => o.value),
      );
    const listed = (await api('/v1/apps')).apps.map((a: any) => a.app);
    expect(await offered()).toEqual(listed);
    const asked = apiRequests.length;
    await page.fill('input[name="app"]', 'web');
    await waitFor(
      'the apps that start with "web"',
      async () => JSON.stringify(await offered()) === '["web-shop"]',
    );
    expect(apiRequests.slice(asked).some((r) => r.url().includes('/v1/apps?prefix=web'))).toBe(true);
    await page.fill('input[name="app"]', 'web-shop');
    await page.press('input[name="app"]', 'Enter');
    await page.waitForFunction(() => location.hash.includes('app=web-shop'));
    await page.waitForSelector('[data-identity]');
  });
});
