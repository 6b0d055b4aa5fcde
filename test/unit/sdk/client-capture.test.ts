import { uuid7Time } from '../../../sdk/src/uuid7';
import { harness } from './harness';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

async function gunzip(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Response(stream).text();
}

describe('client: events on the wire (docs/ARCHITECTURE.md wire contract)', () => {
  it('metric, lifecycle, log and error events have exactly the wire shape', async () => {
    const { client, clock, transport } = harness({ version: '1.4.2', env: 'prod', batchSize: 10 });
    const ts = clock.now();
    client.metric('render.frame_drop', 3, { route: '/checkout', n: 1, ok: true, bad: { x: 1 } as never });
    client.lifecycle('app.started');
    client.log('app.log', 'hello', { level: 'info' });
    const err = new TypeError('card declined');
    client.error(err, { step: 'pay' });
    await client.flush();
    const events = JSON.parse(JSON.stringify(transport.sentEvents));
    const source = { app: 'shop', version: '1.4.2', env: 'prod' };
    expect(events).toEqual([
      {
        id: expect.stringMatching(V7),
        type: 'error',
        name: 'TypeError',
        ts,
        source,
        error: { message: 'card declined', kind: 'TypeError', stack: err.stack },
        attributes: { step: 'pay' },
      },
      { id: expect.stringMatching(V7), type: 'lifecycle', name: 'app.started', ts, source },
      {
        id: expect.stringMatching(V7),
        type: 'log',
        name: 'app.log',
        ts,
        source,
        message: 'hello',
        attributes: { level: 'info' },
      },
      {
        id: expect.stringMatching(V7),
        type: 'metric',
        name: 'render.frame_drop',
        ts,
        source,
        value: 3,
        attributes: { route: '/checkout', n: 1, ok: true },
      },
    ]);
    for (const e of events) expect(uuid7Time(e.id)).toBe(ts);
  });

  it('describes whatever was thrown', async () => {
    const { client, transport } = harness({ batchSize: 10 });
    class PaymentError extends Error {
      override name = 'PaymentError';
    }
    client.error(new PaymentError('declined'));
    client.error('plain string');
    client.error({ message: 'object with message' });
    client.error(42);
    client.error(new Error('x'.repeat(5000)));
    await client.flush();
    const errors = transport.sentEvents.map((e) => ({
      name: e.name,
      message: e.error?.message,
      kind: e.error?.kind,
    }));
    expect(errors.slice(0, 4)).toEqual([
      { name: 'PaymentError', message: 'declined', kind: 'PaymentError' },
      { name: 'error', message: 'plain string', kind: undefined },
      { name: 'error', message: 'object with message', kind: undefined },
      { name: 'error', message: '42', kind: undefined },
    ]);
    expect(errors[4]!.message).toHaveLength(1024);
  });

  it('drops at capture what the collector would reject', () => {
    const { client } = harness();
    client.metric('not a name', 1);
    client.metric('m', Infinity);
    client.metric('m', -1.7e308);
    client.lifecycle('');
    client.log('x'.repeat(200), 'm');
    expect(client.stats().dropped.invalid).toBe(5);
    expect(client.stats().captured).toBe(0);
  });

  it('sends X-Api-Key and gzips bodies of 1 KiB and more', async () => {
    const { client, transport } = harness({ apiKey: 'k-123', gzip: true, batchSize: 50 });
    client.log('app.log', 'short');
    await client.flush();
    for (let i = 0; i < 20; i++) client.log('app.log', `a longer line number ${i} `.repeat(4));
    await client.flush();
    const [small, big] = transport.requests.map((r) => r.request);
    expect(small!.headers).toEqual({
      'content-type': 'application/json',
      'x-api-key': 'k-123',
      'x-sluice-app': 'shop',
    });
    expect(typeof small!.body).toBe('string');
    expect(big!.headers).toEqual({
      'content-type': 'application/json',
      'content-encoding': 'gzip',
      'x-api-key': 'k-123',
      'x-sluice-app': 'shop',
    });
    const json = JSON.parse(await gunzip(big!.body as Uint8Array<ArrayBuffer>));
    expect(json.events).toHaveLength(20);
    expect(json.events).toEqual(JSON.parse(JSON.stringify(big!.events)));
  });
});

describe('client: aggregation', () => {
  const WINDOW = 5000;

  it('a 100 ms metric over 12 s leaves as one <name>_summary per aligned window', async () => {
    const { client, clock, transport } = harness({ aggregation: {}, batchSize: 100, flushIntervalMs: 1000 });
    await clock.advance(WINDOW - (clock.now() % WINDOW)); // start on a window boundary
    const start = clock.now();
    for (let i = 0; i < 120; i++) {
      client.metric('render.frame_drop', i % 10, { route: '/a' });
      await clock.advance(100);
    }
    await clock.advance(1000);
    const summaries = transport.sentEvents;
    expect(summaries.map((e) => [e.name, e.ts, e.summary?.count])).toEqual([
      ['render.frame_drop_summary', start, 50],
      ['render.frame_drop_summary', start + WINDOW, 50],
    ]);
    expect(summaries[0]).toMatchObject({
      type: 'metric',
      source: { app: 'shop' },
      summary: { count: 50, min: 0, max: 9, sum: 225, avg: 4.5 },
      attributes: { route: '/a' },
    });
    expect(summaries[0]!.value).toBeUndefined();
    await client.flush(); // the third window, unfinished
    expect(transport.sentEvents[2]).toMatchObject({ ts: start + 2 * WINDOW, summary: { count: 20 } });
  });

  it('keeps attribute sets apart, whatever their order', async () => {
    const { client, transport } = harness({ aggregation: {}, batchSize: 100 });
    client.metric('m', 1, { a: 1, b: 'x' });
    client.metric('m', 3, { b: 'x', a: 1 });
    client.metric('m', 5, { a: 2, b: 'x' });
    await client.flush();
    const byA = Object.fromEntries(transport.sentEvents.map((e) => [String(e.attributes?.a), e.summary]));
    expect(byA).toEqual({
      '1': { count: 2, min: 1, max: 3, sum: 4, avg: 2 },
      '2': { count: 1, min: 5, max: 5, sum: 5, avg: 5 },
    });
  });

  it('aggregates only the metrics configured, never errors, logs or lifecycle events', async () => {
    for (const metrics of [['cpu'], (name: string) => name === 'cpu']) {
      const { client, transport } = harness({ aggregation: { metrics }, batchSize: 100 });
      client.metric('cpu', 1);
      client.metric('cpu', 2);
      client.metric('mem', 10);
      client.metric('mem', 11);
      client.error('e');
      client.error('e');
      client.lifecycle('app.started');
      client.lifecycle('app.started');
      await client.flush();
      expect(transport.sentEvents.map((e) => e.name).sort()).toEqual(
        ['app.started', 'app.started', 'cpu_summary', 'error', 'error', 'mem', 'mem'].sort(),
      );
    }
  });

  it('samples summaries, not the samples folded into them', async () => {
    const { client, clock, transport } = harness({
      aggregation: {},
      batchSize: 100,
      sampleRate: 0.5,
      random: () => 0.9,
    });
    for (let i = 0; i < 10; i++) client.metric('m', i);
    expect(client.stats().dropped.sampled).toBe(0);
    expect(client.stats().aggregating).toBe(1);
    await clock.advance(WINDOW);
    expect(client.stats().dropped.sampled).toBe(1);
    expect(transport.requests).toHaveLength(0);
  });
});
