/**
 * The SDK against a real collector process (`node dist/src/cli.js serve`) on
 * loopback with a tiny queue (50 events, drained in batches of 10) and a
 * per-app rate limit of 50 events/s, so it really answers 429.
 *
 * Why both: the SQLite writer drains a 50-event queue faster than one client
 * can fill it over HTTP, so the queue alone answers queue_full only to a
 * request larger than the whole queue — which can never fit, and gets
 * Retry-After 30. The rate limit makes an SDK that offers more than 50 events/s hear
 * 429 rate_limited with a short Retry-After, while its batches (40) always
 * fit the queue. Build first: `npm run build` (`npm test` does).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  createClient,
  createNodeClient,
  fetchTransport,
  type Client,
  type Transport,
  type WireEvent,
} from '../../sdk/src/node';
import { freePort, startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { getJson, waitFor } from '../support/http';

/** The package's CommonJS Node entry, as built by `npm run build`. */
const SDK_NODE_DIST = path.resolve(__dirname, '../../sdk/dist/node.cjs');

interface Exchange {
  readonly sentAt: number;
  readonly answeredAt: number;
  readonly events: readonly WireEvent[];
  readonly status: number | 'network error';
  readonly retryAfter: string | null;
  readonly throttled: readonly number[];
  /** The answer's `sample_rate` (docs/http-api.md, "Sampling advice"), when it gave one. */
  readonly advice?: number;
}

/** The real fetch transport, recording every request and its answer. */
function recording(endpoint: string): { transport: Transport; log: Exchange[] } {
  const inner = fetchTransport(endpoint);
  const log: Exchange[] = [];
  return {
    log,
    transport: {
      async send(request) {
        const sentAt = Date.now();
        try {
          const res = await inner.send(request);
          const body = res.body as { throttled?: number[]; sample_rate?: number } | undefined;
          log.push({
            sentAt,
            answeredAt: Date.now(),
            events: request.events,
            status: res.status,
            retryAfter: res.retryAfter ?? null,
            throttled: body?.throttled ?? [],
            ...(body?.sample_rate !== undefined && { advice: body.sample_rate }),
          });
          return res;
        } catch (err) {
          log.push({
            sentAt,
            answeredAt: Date.now(),
            events: request.events,
            status: 'network error',
            retryAfter: null,
            throttled: [],
          });
          throw err;
        }
      },
    },
  };
}

async function storedEvents(collector: CollectorProcess, app: string, type?: string): Promise<WireEvent[]> {
  const q = new URLSearchParams({ app, limit: '1000', ...(type && { type }) });
  const res = await getJson(`${collector.url}/v1/events?${q}`);
  if (res.status !== 200) throw new Error(`GET /v1/events: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.events as WireEvent[];
}

/** Resolves once the SDK has had one more answer (or network error) than `log` holds now. */
async function nextAnswer(log: readonly Exchange[]): Promise<void> {
  const before = log.length;
  await waitFor("the SDK's next answer", () => log.length > before, 10_000);
}

/** One `flush()`: it resolves once nothing is buffered, in flight or aggregating (or at its deadline). */
async function drainFully(client: Client, timeoutMs: number): Promise<void> {
  await client.flush({ timeoutMs });
  expect(client.stats()).toMatchObject({ buffered: { total: 0 }, inFlight: 0, aggregating: 0 });
}

let collector: CollectorProcess;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'sluice-sdk-e2e-'));
  collector = await startCollectorProcess({
    SLUICE_SQLITE_PATH: path.join(dir, 'sluice.db'),
    SLUICE_QUEUE_CAPACITY: '50',
    SLUICE_BATCH_SIZE: '10',
    SLUICE_FLUSH_INTERVAL_MS: '200',
    SLUICE_RATE_LIMIT: '50',
    // A burst of one second of the limit: the overload below is felt within a few answers.
    SLUICE_RATE_LIMIT_BURST: '1s',
  });
});

afterAll(async () => {
  await collector?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('SDK against a real collector with a tiny queue', () => {
  it('backs off on 429, lowers its rate, recovers to 1.0, and stores every error exactly once', async () => {
    const app = `sdk-e2e-${process.pid}`;
    const { transport, log } = recording(`${collector.url}/v1/events`);
    const client = createClient({
      endpoint: `${collector.url}/v1/events`,
      app,
      version: '1.0.0',
      aggregation: false, // every sample is an event: the pressure is real
      batchSize: 40, // fits the 50-event queue: every 429 is one the SDK can wait out
      flushIntervalMs: 50,
      retry: { baseMs: 50, maxMs: 500 },
      transport,
    });
    let errors = 0;
    const errorSeqs: number[] = [];
    const captureError = (what: string): void => {
      errorSeqs.push(errors);
      client.error(new Error(`${what} ${errors}`), { seq: errors });
    };
    // Each step captures a load, then waits for the SDK's next answer: the load follows the
    // SDK's own pace (requests, Retry-After), and the dynamic rate is read after every answer.
    const rates = new Set<number>();
    // Overload: 60 metrics and an error per answer against 50 metrics/s allowed.
    await waitFor(
      "the dynamic rate to fall to the collector's advice",
      async () => {
        for (let i = 0; i < 60; i++) client.metric('render.frame_drop', i, { route: '/checkout' });
        captureError('overload');
        errors++;
        await nextAnswer(log);
        rates.add(client.stats().dynamicRate);
        return client.stats().dynamicRate <= 0.9;
      },
      30_000,
    );
    // One more load at the lowered rate: metrics are sampled out at it (at 0.9 or below, keeping
    // all of 60 has a chance under 0.2 %).
    const sampledBefore = client.stats().dropped.sampled;
    for (let i = 0; i < 60; i++) client.metric('render.frame_drop', i, { route: '/checkout' });
    expect(client.stats().dropped.sampled).toBeGreaterThan(sampledBefore);
    await nextAnswer(log);
    expect(log.some((x) => x.status === 429)).toBe(true);
    // The 429s carry advice (docs/http-api.md, "Sampling advice"): the rate follows it, not the steps.
    expect(log.some((x) => x.status === 429 && x.advice !== undefined && x.advice < 1)).toBe(true);

    // Light traffic: at most one heartbeat per answer fits the limit; the advice goes back to 1.
    await waitFor(
      'the dynamic rate to recover to 1.0',
      async () => {
        const captured = client.stats().captured;
        client.lifecycle('app.heartbeat');
        if (errors % 5 === 0) captureError('light');
        errors++;
        // A heartbeat sampled out sends nothing: then waitFor's next poll is the step.
        if (client.stats().captured > captured) await nextAnswer(log);
        return client.stats().dynamicRate === 1;
      },
      45_000,
    );
    await drainFully(client, 20_000);
    const stats = client.stats();
    await client.close();

    // Backed off: after each 429, nothing was sent before its Retry-After, and its throttled events
    // were resent after it.
    const throttledAnswers = log.filter((x) => x.status === 429);
    expect(throttledAnswers.length).toBeGreaterThanOrEqual(1);
    for (const answer of throttledAnswers) {
      expect(answer.retryAfter).toMatch(/^\d+$/);
      const notBefore = answer.answeredAt + Number(answer.retryAfter) * 1000 - 5;
      const early = log.filter((x) => x.sentAt >= answer.answeredAt && x.sentAt < notBefore);
      expect(early.map((x) => x.sentAt - answer.answeredAt)).toEqual([]);
      expect(answer.throttled.length).toBeGreaterThan(0);
      const firstThrottled = answer.events[answer.throttled[0]!]!.id;
      const resend = log.find(
        (x) => x.sentAt >= answer.answeredAt && x.events.some((e) => e.id === firstThrottled),
      );
      expect(resend).toBeDefined();
    }
    // Only throttled indices were resent: each error left in exactly one request (errors take the fast lane).
    const errorSends = new Map<string, number>();
    for (const x of log) {
      for (const [i, e] of x.events.entries()) {
        if (e.type === 'error' && !x.throttled.includes(i))
          errorSends.set(e.id, (errorSends.get(e.id) ?? 0) + 1);
      }
    }
    expect([...errorSends].filter(([, n]) => n !== 1)).toEqual([]);

    const captured = stats.captured;
    expect(stats.dropped.sampled).toBeGreaterThan(0); // metrics were sampled out at the advised rate
    expect(stats.dropped.buffer_full + stats.dropped.rejected + stats.dropped.client_error).toBe(0);
    expect(stats.sent).toBe(captured);

    // Every error captured is stored exactly once (202 means queued: poll until written).
    const stored = await waitFor(
      'every captured error to be stored',
      async () => {
        const events = await storedEvents(collector, app, 'error');
        return events.length >= errorSeqs.length ? events : null;
      },
      15_000,
    );
    const seqs = stored.map((e) => e.attributes?.seq as number).sort((a, b) => a - b);
    expect(seqs).toEqual(errorSeqs);
    expect(new Set(stored.map((e) => e.id)).size).toBe(stored.length);
    expect(stored).toHaveLength(errorSends.size);
    expect(stored[0]).toMatchObject({
      type: 'error',
      source: { app, version: '1.0.0' },
      error: { kind: 'Error' },
    });
  }, 120_000);

  it('keeps the buffer in a file while the collector is away, and sends it after a restart', async () => {
    const app = `sdk-e2e-persist-${process.pid}`;
    const persistPath = path.join(dir, 'buffer', 'events.json');
    const deadPort = await freePort();
    const offline = createNodeClient({
      endpoint: `http://127.0.0.1:${deadPort}/v1/events`,
      app,
      persistPath,
      exitHooks: false,
      retry: { baseMs: 20, maxMs: 50 },
    });
    for (let i = 0; i < 5; i++) offline.error(new Error(`offline ${i}`), { seq: i });
    offline.lifecycle('app.stopping');
    await offline.close({ timeoutMs: 300 });
    const saved = JSON.parse(await readFile(persistPath, 'utf8')) as WireEvent[];
    expect(saved.map((e) => e.type)).toEqual(['error', 'error', 'error', 'error', 'error', 'lifecycle']);

    const restarted = createNodeClient({
      endpoint: `${collector.url}/v1/events`,
      app,
      persistPath,
      exitHooks: false,
    });
    await drainFully(restarted, 10_000);
    await restarted.close();
    const stored = await waitFor(
      'the saved events to be stored',
      async () => {
        const events = await storedEvents(collector, app);
        return events.length >= 6 ? events : null;
      },
      10_000,
    );
    expect(stored.map((e) => `${e.id}@${e.ts}`).sort()).toEqual(saved.map((e) => `${e.id}@${e.ts}`).sort());
    expect(JSON.parse(await readFile(persistPath, 'utf8'))).toEqual([]);
  });

  it.each([
    ['the event loop runs dry (beforeExit)', 'end', null],
    ['SIGTERM arrives', 'wait', 'SIGTERM'],
  ] as const)('a Node process flushes on exit when %s', async (_, mode, signal) => {
    const app = `sdk-e2e-exit-${mode}-${process.pid}`;
    const script = `
      const { createNodeClient } = require(${JSON.stringify(SDK_NODE_DIST)});
      const client = createNodeClient({ endpoint: ${JSON.stringify(`${collector.url}/v1/events`)}, app: ${JSON.stringify(app)}, flushIntervalMs: 60000 });
      client.error(new Error('at exit'));
      client.metric('shutdown.pending', 1);
      ${mode === 'wait' ? "setInterval(() => {}, 1000); process.stdout.write('ready\\n');" : ''}
    `;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('exit', (code, sig) => resolve([code, sig])),
    );
    if (signal) {
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      child.kill(signal);
    }
    const [code, sig] = await exited;
    if (signal)
      expect(sig).toBe(signal); // re-raised: the process ends as it would without the SDK
    else expect(code).toBe(0);
    const stored = await waitFor(
      'the events flushed at exit to be stored',
      async () => {
        const events = await storedEvents(collector, app);
        return events.length >= 2 ? events : null;
      },
      10_000,
    );
    expect(stored.map((e) => e.name).sort()).toEqual(['Error', 'shutdown.pending_summary']);
  });
  it.each([
    ['the event loop runs dry (beforeExit)', 'end', null],
    ['SIGTERM arrives', 'wait', 'SIGTERM'],
  ] as const)(
    'a Node process whose collector is away saves its events when %s, and ends within the bound',
    async (_, mode, signal) => {
      const persistPath = path.join(dir, `exit-${mode}`, 'events.json');
      const deadPort = await freePort();
      const script = `
      const { createNodeClient } = require(${JSON.stringify(SDK_NODE_DIST)});
      const client = createNodeClient({ endpoint: 'http://127.0.0.1:${deadPort}/v1/events', app: 'exit-offline', persistPath: ${JSON.stringify(persistPath)}, exitHooks: { timeoutMs: 1000 } });
      client.error(new Error('at exit'));
      client.metric('shutdown.pending', 1);
      ${mode === 'wait' ? "setInterval(() => {}, 1000); process.stdout.write('ready\\n');" : ''}
    `;
      const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
        child.once('exit', (code, sig) => resolve([code, sig])),
      );
      if (signal) {
        await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
        child.kill(signal);
      }
      const start = Date.now();
      const [code, sig] = await exited;
      // The hooks retry for 1 s, then save: the process neither hangs nor leaves early.
      expect(Date.now() - start).toBeLessThan(10_000);
      if (signal) expect(sig).toBe(signal);
      else expect(code).toBe(0);
      const saved = JSON.parse(await readFile(persistPath, 'utf8')) as WireEvent[];
      expect(saved.map((e) => e.name)).toEqual(['Error', 'shutdown.pending_summary']);
    },
  );
});
