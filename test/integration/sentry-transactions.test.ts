import { waitFor } from '../support/http';
import { startInProcess, type InProcessCollector } from '../support/in-process';
import { settledLossMap } from '../support/loss-map';
import { tempSqlitePath } from '../support/postgres';
import { metricPoints, storedEvents, uniqueApp } from './otlp-support';
import { dsnOf, runNodeSentry, runPythonSentry, uuidOf } from './sentry-support';

/**
 * @sentry/node with tracing (tracesSampleRate 1) against a collector with the defaults a user
 * gets: each transaction and span is stored as one metric sample of its duration, read back
 * through GET /v1/events and GET /v1/metrics; the SDK's envelope sent again is stored once, and
 * the loss map holds its identity. Both ways the SDK sends them: span streaming (`span` items,
 * its default) and `transaction` items (`traceLifecycle: 'static'`).
 */
describe.each([
  { lifecycle: 'stream', project: 3 },
  { lifecycle: 'static', project: 4 },
])('Sentry tracing ($lifecycle) becomes duration samples', ({ lifecycle, project }) => {
  let c: InProcessCollector;
  let sqlite: string;
  const app = uniqueApp(`traced-${lifecycle}`);

  beforeAll(async () => {
    sqlite = tempSqlitePath(`sentry-tx-${lifecycle}`);
    c = await startInProcess(
      { SLUICE_SQLITE_PATH: sqlite, SLUICE_SENTRY_PROJECTS: `${project}=${app}` },
      { defaults: 'user' },
    );
  });

  afterAll(async () => {
    await c?.stop();
  });

  it('each transaction and span is one sample of its duration; a resent envelope is stored once', async () => {
    const run = await runNodeSentry({
      scenario: 'tracing',
      traceLifecycle: lifecycle,
      dsn: dsnOf(c.url, 'anypublickey', project),
      release: 'traced@3.1.0',
      environment: 'staging',
    });
    for (const a of run.answers) expect(a.status).toBe(200);
    expect(run.resendStatus).toBe(200);
    const sent: any[] = run.spans;
    const unique = [...new Map(sent.map((s) => [s.spanId, s])).values()];
    // checkout, its child span charge card, search; the checkout's envelope twice.
    expect(unique.map((s) => s.name).sort()).toEqual(['charge card', 'checkout', 'search']);
    expect(sent.length).toBeGreaterThan(unique.length);
    const ms = (seconds: number): number => Math.round(seconds * 1000);
    const byName = new Map(unique.map((s) => [s.name, s]));
    expect(ms(byName.get('checkout').end) - ms(byName.get('checkout').start)).toBeGreaterThanOrEqual(45);

    const samples = await waitFor(`${unique.length} duration samples`, async () => {
      const e = await storedEvents(c.url, app, '&type=metric');
      return e.length >= unique.length ? e : null;
    });
    const source = { app, version: 'traced@3.1.0', env: 'staging' };
    for (const s of unique) {
      const stored = samples.filter(
        (e) =>
          e.attributes.trace_id === s.traceId &&
          (s.segment
            ? e.attributes.transaction === s.name && !('span' in e.attributes)
            : e.attributes.span === s.name),
      );
      expect(stored).toEqual([
        expect.objectContaining({
          type: 'metric',
          ts: ms(s.end),
          name: s.segment ? 'sentry.transaction.duration' : 'sentry.span.duration',
          value: ms(s.end) - ms(s.start),
          source,
          attributes: {
            transaction: s.segment ? s.name : 'checkout',
            ...(s.segment ? {} : { span: s.name }),
            op: s.op,
            status: s.status,
            trace_id: s.traceId,
          },
        }),
      ]);
      if (s.eventId !== null) expect(stored[0].id).toBe(uuidOf(s.eventId));
    }
    expect(byName.get('checkout').op).toBe('http.server');
    expect(byName.get('charge card').op).toBe('http.client');
    expect(byName.get('search').op).toBe('db');
    expect(byName.get('search').status).not.toBe('ok');

    const points = await metricPoints(c.url, app, 'sentry.transaction.duration');
    expect(points.map((p) => p.max).sort((a, b) => a - b)).toEqual(
      unique
        .filter((s) => s.segment)
        .map((s) => ms(s.end) - ms(s.start))
        .sort((a, b) => a - b),
    );
    expect(await storedEvents(c.url, app)).toHaveLength(unique.length);

    // Every copy was taken (a `direct` sender's acceptances are what it generated); storage kept one.
    const resent = sent.length - unique.length;
    const m = await settledLossMap(c.url, app, { kind: 'sqlite', path: sqlite });
    expect(m).toMatchObject({
      generated: sent.length,
      stored: unique.length,
      lost: resent,
      losses: { storage: { duplicate: resent } },
    });
  });
});

/**
 * Spans count against the app's rate limit like logs (the collector's defaults but 10 events/s, a
 * burst of 100): the SDK's envelope of 303 spans (larger than the burst) is taken, as any request
 * larger than a window's budget is; the same envelope sent again at once is refused with 429
 * naming the transaction and span categories, never `error`, and counted lost at the collector.
 */
describe('Sentry spans over the rate limit', () => {
  let c: InProcessCollector;
  let sqlite: string;
  const app = uniqueApp('traced-limited');

  beforeAll(async () => {
    sqlite = tempSqlitePath('sentry-tx-limit');
    c = await startInProcess(
      { SLUICE_SQLITE_PATH: sqlite, SLUICE_SENTRY_PROJECTS: `5=${app}`, SLUICE_RATE_LIMIT: '10' },
      { defaults: 'user' },
    );
  });

  afterAll(async () => {
    await c?.stop();
  });

  it('are refused with the transaction and span categories and counted lost at the collector', async () => {
    const run = await runNodeSentry({
      scenario: 'tracing',
      dsn: dsnOf(c.url, 'anypublickey', 5),
      searchSpans: 300,
    });
    const answers = run.answers as Array<{ status: number; rateLimits: string | null; spans: number }>;
    const refused = answers.filter((a) => a.status !== 200);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(r.status).toBe(429);
      expect(r.rateLimits).toMatch(/^\d+:default;log_item;transaction;span:key:rate_limited$/);
    }
    const sent: any[] = run.spans;
    expect(sent.length).toBeGreaterThanOrEqual(2 * 303);
    const m = await settledLossMap(c.url, app, { kind: 'sqlite', path: sqlite });
    expect(m).toMatchObject({
      generated: sent.length,
      stored: sent.length - refused.reduce((n, a) => n + a.spans, 0),
      losses: { collector: { rate_limited: refused.reduce((n, a) => n + a.spans, 0) } },
    });
    expect(m.stored + m.lost).toBe(m.generated);
    const stored = await storedEvents(c.url, app, '&type=metric');
    expect(stored.length).toBe(m.stored);
  });
});

/** Debian's python3-sentry-sdk (1.9) sends `transaction` items whose times are RFC 3339 texts. */
describe('python3-sentry-sdk transactions', () => {
  let c: InProcessCollector;
  let sqlite: string;
  const app = uniqueApp('traced-py');

  beforeAll(async () => {
    sqlite = tempSqlitePath('sentry-tx-py');
    c = await startInProcess(
      { SLUICE_SQLITE_PATH: sqlite, SLUICE_SENTRY_PROJECTS: `6=${app}` },
      { defaults: 'user' },
    );
  });

  afterAll(async () => {
    await c?.stop();
  });

  it('a transaction and its span are two duration samples', async () => {
    const run = await runPythonSentry({
      dsn: dsnOf(c.url, 'anypublickey', 6),
      release: 'py@1.0',
      environment: 'production',
      tracing: true,
    });
    expect(run.statuses).toEqual([200]);
    const [t] = run.transactions;
    const [span] = t.spans;
    const ms = (text: string): number => Date.parse(text);
    const samples = await waitFor('2 duration samples', async () => {
      const e = await storedEvents(c.url, app, '&type=metric');
      return e.length >= 2 ? e : null;
    });
    const source = { app, version: 'py@1.0', env: 'production' };
    expect(samples.find((e) => e.name === 'sentry.transaction.duration')).toMatchObject({
      id: uuidOf(run.transaction_id),
      ts: ms(t.timestamp),
      value: ms(t.timestamp) - ms(t.start_timestamp),
      source,
      attributes: {
        transaction: 'checkout',
        op: 'http.server',
        status: 'ok',
        trace_id: t.contexts.trace.trace_id,
      },
    });
    expect(samples.find((e) => e.name === 'sentry.span.duration')).toMatchObject({
      ts: ms(span.timestamp),
      value: ms(span.timestamp) - ms(span.start_timestamp),
      source,
      attributes: {
        transaction: 'checkout',
        span: 'SELECT 1',
        op: 'db',
        trace_id: t.contexts.trace.trace_id,
      },
    });
    expect(ms(span.timestamp) - ms(span.start_timestamp)).toBeGreaterThanOrEqual(15);
    expect(samples).toHaveLength(2);
    const m = await settledLossMap(c.url, app, { kind: 'sqlite', path: sqlite });
    expect(m).toMatchObject({ generated: 2, stored: 2, lost: 0 });
  });
});
