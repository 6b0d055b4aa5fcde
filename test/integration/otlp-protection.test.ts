import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateKey } from '../../src/auth/api-keys';
import { metric } from '../support/events';
import { postEvents, waitFor } from '../support/http';
import type { InProcessCollector } from '../support/in-process';
import { createTestDatabase, tempSqlitePath } from '../support/postgres';
import { TcpProxy } from '../support/tcp-proxy';
import { errorSpan, logRecord, logsRequest, postOtlp, tracesRequest } from './otlp-requests';
import {
  bySeq,
  otlpRequestCount,
  runOtelClient,
  startWithOtlp,
  storedEvents,
  uniqueApp,
} from './otlp-support';

const RESOURCE_EXHAUSTED = 8;
const UNAUTHENTICATED = 16;
const UNAVAILABLE = 14;

function seqRecords(from: number, count: number) {
  return Array.from({ length: count }, (_, i) => logRecord(from + i));
}

/**
 * The OTLP receiver shares the protections of `POST /v1/events`: the lanes, the rate limit and
 * its error fast lane, API keys. The standard lane here holds 10 events and is written only when
 * it holds a whole batch of 10, so it fills and empties when the test says.
 */
describe('OTLP under a full lane', () => {
  let c: InProcessCollector;
  let otlpUrl: string;

  beforeAll(async () => {
    ({ c, otlpUrl } = await startWithOtlp({
      SLUICE_SQLITE_PATH: tempSqlitePath('otlp-lane'),
      SLUICE_QUEUE_CAPACITY: '10',
      SLUICE_BATCH_SIZE: '10',
      SLUICE_FLUSH_INTERVAL_MS: '60000',
    }));
  });

  afterAll(async () => {
    await c?.stop();
  });

  it('429 with a short Retry-After for the whole export; the exporter’s retry lands every record once', async () => {
    const app = uniqueApp('lane');
    expect(
      (
        await postEvents(
          c.url,
          Array.from({ length: 6 }, () => metric('filler')),
        )
      ).status,
    ).toBe(202);

    const refused = await postOtlp(otlpUrl, 'logs', logsRequest(app, seqRecords(0, 5)), {
      encoding: 'protobuf',
    });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({
      code: RESOURCE_EXHAUSTED,
      message: expect.stringMatching(/queue is full/),
    });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(2);

    // The real exporter meets the same full lane, then retries after Retry-After.
    const before = await otlpRequestCount(c.url, '429');
    const client = runOtelClient({ scenario: 'log-batch', count: 5, url: otlpUrl, app, encoding: 'json' });
    await waitFor(
      'the exporter to be refused',
      async () => (await otlpRequestCount(c.url, '429')) > before,
      20_000,
    );
    // 4 more events make the batch of 10: the writer empties the lane.
    expect(
      (
        await postEvents(
          c.url,
          Array.from({ length: 4 }, () => metric('filler')),
        )
      ).status,
    ).toBe(202);
    const run = await client;
    expect(run.exports).toEqual([{ code: 0 }]);

    // The 5 exported records are taken once the lane has room; the 6th batch is not full, so
    // fill it to get them written.
    expect(
      (
        await postEvents(
          c.url,
          Array.from({ length: 5 }, () => metric('filler')),
        )
      ).status,
    ).toBe(202);
    const events = await waitFor('5 log events', async () => {
      const e = await storedEvents(c.url, app);
      return e.length >= 5 ? e : null;
    });
    const seqs = bySeq(events);
    for (let seq = 0; seq < 5; seq++) expect(seqs.get(seq)).toHaveLength(1);
    expect(events).toHaveLength(5);
  });
});

describe('OTLP under the rate limit', () => {
  let c: InProcessCollector;
  let otlpUrl: string;

  beforeAll(async () => {
    ({ c, otlpUrl } = await startWithOtlp({
      SLUICE_SQLITE_PATH: tempSqlitePath('otlp-limit'),
      SLUICE_RATE_LIMIT: '10',
      // A burst of one second of the limit: the budgets below are per second.
      SLUICE_RATE_LIMIT_BURST: '1s',
      SLUICE_FLUSH_INTERVAL_MS: '5',
    }));
  });

  afterAll(async () => {
    await c?.stop();
  });

  it('exports over the app’s budget are refused whole (429); errors pass through the fast lane', async () => {
    const app = uniqueApp('limit');
    // Exports of 8 against a budget of 10 a second, back to back: one of the first few is refused
    // (the second, or the third when the intake lets a request run the budget into debt).
    const sent: number[] = [];
    let refused: { base: number; answer: Awaited<ReturnType<typeof postOtlp>> } | null = null;
    for (const base of [0, 100, 200, 300]) {
      const answer = await postOtlp(otlpUrl, 'logs', logsRequest(app, seqRecords(base, 8)));
      sent.push(base);
      if (answer.status === 429) {
        refused = { base, answer };
        break;
      }
      expect(answer.status).toBe(200);
    }
    expect(refused).not.toBeNull();
    const { answer, base } = refused!;
    expect(answer.body).toMatchObject({
      code: RESOURCE_EXHAUSTED,
      message: expect.stringMatching(/Rate limit/),
    });
    const retryAfter = Number(answer.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(2);

    // Error spans are errors: the limiter does not hold them back.
    const spans = tracesRequest(app, [errorSpan(1000), errorSpan(1001), errorSpan(1002)]);
    expect((await postOtlp(otlpUrl, 'traces', spans, { encoding: 'protobuf' })).status).toBe(200);

    // Resent as an exporter does, the refused export gets in once the budget allows.
    const resend = logsRequest(app, seqRecords(base, 8));
    await waitFor(
      'the resend to be taken',
      async () => (await postOtlp(otlpUrl, 'logs', resend)).status === 200,
      10_000,
    );
    const expected = [...sent.flatMap((b) => Array.from({ length: 8 }, (_, i) => b + i)), 1000, 1001, 1002];
    const events = await waitFor(`${expected.length} events`, async () => {
      const e = await storedEvents(c.url, app);
      return e.length >= expected.length ? e : null;
    });
    const seqs = bySeq(events);
    for (const seq of expected) expect([seq, seqs.get(seq)?.length]).toEqual([seq, 1]);
    expect(events).toHaveLength(expected.length);
  });

  // Admission of a request as a whole while the app's budget is positive (the intake's
  // `whole: true`): until the intake does that, an export larger than the per-second budget is
  // refused every time.
  it('an export larger than the per-second budget still gets in, and the budget is repaid after', async () => {
    const app = uniqueApp('big');
    const big = logsRequest(app, seqRecords(0, 25));
    await waitFor(
      'the big export to be taken',
      async () => (await postOtlp(otlpUrl, 'logs', big)).status === 200,
      10_000,
    );
    // The debt (15 events over the budget) is repaid before anything else of the app is taken.
    expect((await postOtlp(otlpUrl, 'logs', logsRequest(app, seqRecords(100, 1)))).status).toBe(429);
    const events = await waitFor('25 events', async () => {
      const e = await storedEvents(c.url, app);
      return e.length >= 25 ? e : null;
    });
    expect(bySeq(events).size).toBe(25);
  });
});

describe('OTLP with API keys', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sluice-otlp-auth-'));
  const shop = generateKey('ingest', 'shop-otlp', 'web-shop');
  const grafana = generateKey('read', 'grafana-otlp');
  const keysFile = path.join(dir, 'keys.json');
  writeFileSync(keysFile, JSON.stringify({ keys: [shop.entry, grafana.entry] }));
  let c: InProcessCollector;
  let otlpUrl: string;

  beforeAll(async () => {
    ({ c, otlpUrl } = await startWithOtlp({
      SLUICE_SQLITE_PATH: tempSqlitePath('otlp-auth'),
      SLUICE_AUTH_KEYS_FILE: keysFile,
      SLUICE_FLUSH_INTERVAL_MS: '5',
    }));
  });

  afterAll(async () => {
    await c?.stop();
  });

  const readEvents = async (app: string): Promise<any[]> => {
    const res = await fetch(`${c.url}/v1/events?app=${app}&limit=1000`, {
      headers: { authorization: `Bearer ${grafana.secret}` },
    });
    return ((await res.json()) as { events: any[] }).events;
  };

  it('401 with a google.rpc.Status without a key, with a wrong one, or with a read token', async () => {
    for (const headers of [{}, { 'x-api-key': 'sk_in_nope' }, { 'x-api-key': grafana.secret }] as Array<
      Record<string, string>
    >) {
      for (const encoding of ['json', 'protobuf'] as const) {
        const res = await postOtlp(otlpUrl, 'logs', logsRequest('web-shop', [logRecord(1)]), {
          encoding,
          headers,
        });
        expect(res).toMatchObject({ status: 401, body: { code: UNAUTHENTICATED } });
      }
    }
  });

  it('service.name must be the key’s app (else partial_success); a resource without one takes the key’s app', async () => {
    const headers = { 'x-api-key': shop.secret };
    const mismatch = await postOtlp(otlpUrl, 'logs', logsRequest('admin', [logRecord(1)]), { headers });
    expect(mismatch.status).toBe(200);
    expect(mismatch.body.partialSuccess).toEqual({
      rejectedLogRecords: '1',
      errorMessage: '1 of 1 log records rejected: app_mismatch ×1.',
    });
    const anonymous = await postOtlp(otlpUrl, 'logs', logsRequest(null, [logRecord(2)]), { headers });
    expect(anonymous.status).toBe(200);
    expect(anonymous.body).toEqual({});
    await waitFor('the record under the key’s app', async () => bySeq(await readEvents('web-shop')).has(2));
  });

  it('the exporter’s key from its headers (OTEL_EXPORTER_OTLP_HEADERS) is honoured', async () => {
    const run = await runOtelClient({
      scenario: 'log-batch',
      count: 3,
      url: otlpUrl,
      app: 'web-shop',
      encoding: 'protobuf',
      headers: { 'x-api-key': shop.secret },
    });
    expect(run.exports).toEqual([{ code: 0 }]);
    const refused = await runOtelClient({
      scenario: 'log-batch',
      count: 1,
      url: otlpUrl,
      app: 'web-shop',
      encoding: 'json',
    });
    expect(refused.exports).toEqual([{ code: 1, error: expect.stringMatching(/401|Unauthorized/i) }]);
  });
});

describe('OTLP receiver at shutdown', () => {
  it('stops accepting with the main listener and is closed by the same sequence', async () => {
    const { c, otlpUrl } = await startWithOtlp({ SLUICE_SQLITE_PATH: tempSqlitePath('otlp-stop') });
    const app = uniqueApp('stop');
    expect((await postOtlp(otlpUrl, 'logs', logsRequest(app, [logRecord(1)]))).status).toBe(200);
    expect(await c.stop()).toBe(0);
    await expect(fetch(`${otlpUrl}/v1/logs`, { method: 'POST', body: '{}' })).rejects.toThrow();
    expect(c.collector.otlp?.server.listening).toBe(false);
  });
});

describe('OTLP receiver behind a plain TCP front', () => {
  it('an exporter sending through a TCP forwarder (as a load balancer in TCP mode) lands its records', async () => {
    const { c, otlpUrl } = await startWithOtlp({ SLUICE_SQLITE_PATH: tempSqlitePath('otlp-tcp') });
    const proxy = new TcpProxy('127.0.0.1', Number(new URL(otlpUrl).port));
    await proxy.start();
    try {
      const app = uniqueApp('tcp');
      const run = await runOtelClient({
        scenario: 'log-batch',
        count: 7,
        url: `http://127.0.0.1:${proxy.port}`,
        app,
        encoding: 'protobuf',
      });
      expect(run.exports).toEqual([{ code: 0 }]);
      const events = await waitFor('7 events', async () => {
        const e = await storedEvents(c.url, app);
        return e.length >= 7 ? e : null;
      });
      expect([...bySeq(events).keys()].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    } finally {
      await proxy.close();
      await c.stop();
    }
  });
});

describe('OTLP with storage away', () => {
  it('SLUICE_ACK=stored: 503 with a google.rpc.Status and a short Retry-After, then 200 once storage is back', async () => {
    const db = await createTestDatabase('otlp-away');
    const target = new URL(db.url);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.start();
    const viaProxy = new URL(db.url);
    viaProxy.port = String(proxy.port);
    const { c, otlpUrl } = await startWithOtlp({
      SLUICE_DATABASE_URL: viaProxy.toString(),
      SLUICE_ACK: 'stored',
      SLUICE_ACK_TIMEOUT_MS: '1500',
      SLUICE_HEALTH_INTERVAL_MS: '100',
      SLUICE_STORAGE_TIMEOUT_MS: '500',
      SLUICE_FLUSH_INTERVAL_MS: '20',
    });
    try {
      const app = uniqueApp('away');
      expect((await postOtlp(otlpUrl, 'logs', logsRequest(app, [logRecord(1)]))).status).toBe(200);
      proxy.cut();
      await waitFor('readyz 503', async () => (await fetch(`${c.url}/readyz`)).status === 503, 5000);
      for (const encoding of ['json', 'protobuf'] as const) {
        const refused = await postOtlp(otlpUrl, 'logs', logsRequest(app, [logRecord(2)]), { encoding });
        expect(refused).toMatchObject({ status: 503, body: { code: UNAVAILABLE } });
        const retryAfter = Number(refused.headers.get('retry-after'));
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        expect(retryAfter).toBeLessThanOrEqual(2);
      }
      proxy.restore();
      await waitFor('readyz 200', async () => (await fetch(`${c.url}/readyz`)).status === 200, 10_000);
      expect((await postOtlp(otlpUrl, 'logs', logsRequest(app, [logRecord(2)]))).status).toBe(200);
      const events = await storedEvents(c.url, app);
      expect([...bySeq(events).keys()].sort()).toEqual([1, 2]);
    } finally {
      await c.stop();
      await proxy.close();
      await db.drop();
    }
  });
});
