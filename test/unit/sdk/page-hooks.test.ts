import { fetchTransport } from '../../../sdk/src/transport';
import { FakeClock, throttleAll } from './fakes';
import { harness } from './harness';

type Globals = { document?: unknown; window?: unknown; navigator?: unknown; fetch?: unknown };
const g = globalThis as Globals;

/** A minimal page: `document` with a settable `visibilityState`, `window` for `pagehide`. */
function fakePage(): { hide(): void; leave(): void; restore(): void } {
  const saved = { document: g.document, window: g.window };
  const doc = Object.assign(new EventTarget(), { visibilityState: 'visible' });
  const win = new EventTarget();
  g.document = doc;
  g.window = win;
  return {
    hide() {
      doc.visibilityState = 'hidden';
      doc.dispatchEvent(new Event('visibilitychange'));
    },
    leave() {
      win.dispatchEvent(new Event('pagehide'));
    },
    restore() {
      g.document = saved.document;
      g.window = saved.window;
    },
  };
}

describe('page hooks: flush when the page is hidden', () => {
  let page: ReturnType<typeof fakePage>;
  beforeEach(() => (page = fakePage()));
  afterEach(() => page.restore());

  it('sends synchronously, with keepalive, uncompressed, open windows included', () => {
    const { client, transport } = harness({
      pageHooks: true,
      gzip: true,
      batchSize: 100,
      flushIntervalMs: 60_000,
      aggregation: {},
    });
    client.error(new Error('x'));
    client.metric('m', 1);
    client.metric('m', 3);
    page.hide();
    expect(transport.requests).toHaveLength(1); // no await: started inside the event handler
    const { request } = transport.requests[0]!;
    expect(request.keepalive).toBe(true);
    expect(request.headers['content-encoding']).toBeUndefined();
    expect(typeof request.body).toBe('string');
    expect(request.events.map((e) => e.name)).toEqual(['Error', 'm_summary']);
  });

  it('keeps within the 64 KiB keepalive budget; the rest stays buffered', async () => {
    const { client, transport, clock } = harness({
      pageHooks: true,
      batchSize: 1000,
      flushIntervalMs: 60_000,
    });
    for (let i = 0; i < 300; i++) client.log('app.log', 'x'.repeat(1000));
    page.leave();
    const sizes = transport.requests.map((r) => new TextEncoder().encode(r.request.body as string).length);
    expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(64 * 1024);
    const sent = transport.requests.reduce((n, r) => n + r.events.length, 0);
    expect(sent).toBeGreaterThan(50);
    await clock.advance(0);
    expect(client.stats().buffered.total).toBe(300 - sent);
  });

  it('sends nothing on hide while Retry-After holds', async () => {
    const { client, transport, clock } = harness({ pageHooks: true, batchSize: 1, flushIntervalMs: 0 });
    transport.answer(throttleAll('30'));
    client.error('x');
    await clock.advance(0);
    page.hide();
    expect(transport.requests).toHaveLength(1);
  });

  it('removes its hooks on close', async () => {
    const clock = new FakeClock();
    const { client, transport } = harness(
      { pageHooks: true, batchSize: 100, flushIntervalMs: 60_000 },
      clock,
    );
    await client.close();
    page.hide();
    expect(transport.requests).toHaveLength(0);
  });
});

describe('fetchTransport', () => {
  const saved = { fetch: g.fetch, navigator: g.navigator };
  afterEach(() => {
    g.fetch = saved.fetch;
    Object.defineProperty(globalThis, 'navigator', {
      value: saved.navigator,
      configurable: true,
      writable: true,
    });
  });
  const request = {
    events: [],
    body: '{"events":[]}',
    headers: { 'content-type': 'application/json' },
    keepalive: true,
  };

  it('passes keepalive to fetch and reads status, Retry-After and body', async () => {
    const calls: RequestInit[] = [];
    g.fetch = async (_url: string, init: RequestInit) => {
      calls.push(init);
      return new Response('{"accepted":0,"rejected":[],"throttled":[]}', {
        status: 429,
        headers: { 'retry-after': '5' },
      });
    };
    const res = await fetchTransport('http://c.test/v1/events').send(request);
    expect(calls[0]!.keepalive).toBe(true);
    expect(res).toEqual({ status: 429, retryAfter: '5', body: { accepted: 0, rejected: [], throttled: [] } });
  });

  it('falls back to sendBeacon when a keepalive fetch is refused', async () => {
    const beacons: [string, Blob][] = [];
    g.fetch = () => Promise.reject(new TypeError('keepalive quota'));
    Object.defineProperty(globalThis, 'navigator', {
      value: { sendBeacon: (url: string, blob: Blob) => beacons.push([url, blob]) > 0 },
      configurable: true,
      writable: true,
    });
    const res = await fetchTransport('http://c.test/v1/events').send(request);
    expect(res).toEqual({ status: 202, unconfirmed: true });
    expect(beacons[0]![0]).toBe('http://c.test/v1/events');
    expect(beacons[0]![1].type).toBe('application/json');
    expect(await beacons[0]![1].text()).toBe('{"events":[]}');
  });

  it('a refused beacon is a network error (the events are retried)', async () => {
    g.fetch = () => Promise.reject(new TypeError('offline'));
    Object.defineProperty(globalThis, 'navigator', {
      value: { sendBeacon: () => false },
      configurable: true,
      writable: true,
    });
    await expect(fetchTransport('http://c.test/v1/events').send(request)).rejects.toThrow('offline');
  });

  it('aborts a request that is not answered in time', async () => {
    g.fetch = (_url: string, init: RequestInit) =>
      new Promise((_, reject) => init.signal?.addEventListener('abort', () => reject(new Error('aborted'))));
    await expect(
      fetchTransport('http://c.test/v1/events', 20).send({ ...request, keepalive: false }),
    ).rejects.toThrow('aborted');
  });
});
