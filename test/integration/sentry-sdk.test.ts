import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateKey } from '../../src/auth/api-keys';
import { getJson, waitFor } from '../support/http';
import { startInProcess, type InProcessCollector } from '../support/in-process';
import { settledLossMap } from '../support/loss-map';
import { tempSqlitePath } from '../support/postgres';
import { storedEvents, uniqueApp } from './otlp-support';
import { dsnOf, runNodeSentry, runPythonSentry, uuidOf } from './sentry-support';

/**
 * Sentry's own SDKs as the clients (@sentry/node in its own process, Debian's python3-sentry-sdk),
 * against collectors with the defaults a user gets (SQLite, rate limit 100/s, shedding on). What
 * they sent is read back through the read API, each event once, and the loss map holds its identity.
 */
describe('Sentry SDKs, auth off: the project id names the app', () => {
  let c: InProcessCollector;
  let sqlite: string;
  const checkout = uniqueApp('checkout');
  const web = uniqueApp('web');

  beforeAll(async () => {
    sqlite = tempSqlitePath('sentry-sdk');
    c = await startInProcess(
      { SLUICE_SQLITE_PATH: sqlite, SLUICE_SENTRY_PROJECTS: `1=${checkout},2=${web}` },
      { defaults: 'user' },
    );
  });

  afterAll(async () => {
    await c?.stop();
  });

  it('@sentry/node: an exception, messages and logs are stored as errors and logs, a transaction as its duration', async () => {
    const run = await runNodeSentry({
      scenario: 'errors',
      dsn: dsnOf(c.url, 'anypublickey', 1),
      release: 'checkout@2.0.1',
      environment: 'staging',
    });
    expect(run.answers.length).toBeGreaterThan(0);
    for (const a of run.answers) expect(a.status).toBe(200);

    const events = await waitFor('6 events', async () => {
      const e = await storedEvents(c.url, checkout);
      return e.length >= 6 ? e : null;
    });
    const byId = new Map(events.map((e) => [e.id, e]));
    const source = { app: checkout, version: 'checkout@2.0.1', env: 'staging' };
    expect(events.filter((e) => e.type === 'metric')).toEqual([
      expect.objectContaining({
        name: 'sentry.transaction.duration',
        value: expect.any(Number),
        source,
        attributes: expect.objectContaining({ transaction: 'checkout', status: 'ok' }),
      }),
    ]);
    const exception = byId.get(uuidOf(run.exceptionId));
    expect(exception).toMatchObject({
      type: 'error',
      name: 'sentry.event',
      source,
      error: { kind: 'TypeError', message: 'card declined for 42' },
      attributes: {
        route: '/checkout',
        'sentry.level': 'error',
        'sentry.platform': 'node',
        'runtime.name': 'node',
      },
    });
    expect(exception.error.stack).toMatch(
      /^TypeError: card declined for 42\n {4}at chargeCard \(.*sentry-client\.js:\d+:\d+\)\n {4}at main /,
    );
    expect(byId.get(uuidOf(run.errorMessageId))).toMatchObject({
      type: 'error',
      source,
      error: { message: 'payment backend unreachable' },
    });
    expect(byId.get(uuidOf(run.infoId))).toMatchObject({
      type: 'log',
      source,
      message: 'cart updated',
      attributes: { 'sentry.level': 'info' },
    });
    const logs = events
      .filter((e) => e.name === 'sentry.log')
      .sort((a, b) => String(a.message).localeCompare(String(b.message)));
    expect(logs).toEqual([
      expect.objectContaining({
        type: 'log',
        message: 'checkout started',
        source,
        attributes: expect.objectContaining({ cart: 3, 'sentry.level': 'info' }),
      }),
      expect.objectContaining({
        type: 'log',
        message: 'slow payment',
        source,
        attributes: expect.objectContaining({ ms: 1200, 'sentry.level': 'warn' }),
      }),
    ]);
    expect(events).toHaveLength(6);

    const m = await settledLossMap(c.url, checkout, { kind: 'sqlite', path: sqlite });
    expect(m).toMatchObject({ generated: 6, stored: 6, lost: 0 });

    // The console's error groups show them as any other error.
    const groups = await getJson(`${c.url}/v1/error-groups?app=${checkout}`);
    expect(groups.body.groups).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'TypeError', message: 'card declined for 42', count: 1 }),
        expect.objectContaining({ kind: null, message: 'payment backend unreachable', count: 1 }),
      ]),
    );
  });

  it('python3-sentry-sdk: an exception and an info message arrive, and an event sent twice is stored once', async () => {
    const resendId = randomBytes(16).toString('hex');
    const run = await runPythonSentry({
      dsn: dsnOf(c.url, 'anypublickey', 2),
      release: 'web@1.0.0',
      environment: 'production',
      resend_id: resendId,
    });
    expect(run.statuses).toEqual([200, 200, 200, 200]);

    const events = await waitFor('3 events', async () => {
      const e = await storedEvents(c.url, web);
      return e.length >= 3 ? e : null;
    });
    const byId = new Map(events.map((e) => [e.id, e]));
    const source = { app: web, version: 'web@1.0.0', env: 'production' };
    const exception = byId.get(uuidOf(run.exception_id));
    expect(exception).toMatchObject({
      type: 'error',
      source,
      error: { kind: 'ValueError', message: 'card declined for 42' },
      attributes: { route: '/checkout', 'sentry.platform': 'python', 'runtime.name': 'CPython' },
    });
    expect(exception.error.stack).toMatch(
      /^ValueError: card declined for 42\n {4}at charge_card \(sentry-client\.py:\d+\)\n/,
    );
    expect(byId.get(uuidOf(run.info_id))).toMatchObject({ type: 'log', source, message: 'cart updated' });
    expect(byId.get(uuidOf(resendId))).toMatchObject({
      type: 'error',
      source,
      error: { message: 'sent twice' },
    });
    expect(events).toHaveLength(3);

    // Both copies were accepted (a `direct` sender's acceptances are what it generated) and
    // storage kept one: the second is counted where storage found it a duplicate.
    const m = await settledLossMap(c.url, web, { kind: 'sqlite', path: sqlite });
    expect(m).toMatchObject({ generated: 4, stored: 3, lost: 1, losses: { storage: { duplicate: 1 } } });
  });

  it('a project not in SLUICE_SENTRY_PROJECTS is the app sentry-<id>', async () => {
    const project = 900_000 + Math.floor(Math.random() * 99_999);
    const run = await runNodeSentry({ scenario: 'errors', dsn: dsnOf(c.url, 'k', project) });
    const events = await waitFor('6 events', async () => {
      const e = await storedEvents(c.url, `sentry-${project}`);
      return e.length >= 6 ? e : null;
    });
    expect(events.map((e) => e.id)).toContain(uuidOf(run.exceptionId));
  });
});

describe('Sentry SDKs, auth on: the DSN public key is an ingest key id and names the app', () => {
  let c: InProcessCollector;
  const app = uniqueApp('shop');

  beforeAll(async () => {
    const keysFile = path.join(os.tmpdir(), `sentry-keys-${process.pid}-${Date.now()}.json`);
    const ingest = generateKey('ingest', 'shop_dsn', app);
    const read = generateKey('read', 'reader');
    writeFileSync(keysFile, JSON.stringify({ keys: [ingest.entry, read.entry] }));
    c = await startInProcess(
      { SLUICE_SQLITE_PATH: tempSqlitePath('sentry-auth'), SLUICE_AUTH_KEYS_FILE: keysFile },
      { defaults: 'user' },
    );
    readHeaders = { 'x-api-key': read.secret };
  });
  let readHeaders: Record<string, string> = {};

  afterAll(async () => {
    await c?.stop();
  });

  it("stores a key's events under its app, whatever the project id; a key that is not an ingest key id is 401", async () => {
    const run = await runNodeSentry({ scenario: 'errors', dsn: dsnOf(c.url, 'shop_dsn', 5) });
    for (const a of run.answers) expect(a.status).toBe(200);
    const wrong = await runNodeSentry({ scenario: 'errors', dsn: dsnOf(c.url, 'reader', 5) });
    expect(wrong.answers.map((a: { status: number }) => a.status)).toEqual(wrong.answers.map(() => 401));

    const events = await waitFor('6 events', async () => {
      const res = await fetch(`${c.url}/v1/events?app=${app}`, { headers: readHeaders });
      const body = (await res.json()) as { events: any[] };
      return body.events.length >= 6 ? body.events : null;
    });
    expect(events.map((e) => e.id)).toContain(uuidOf(run.exceptionId));
    expect(events).toHaveLength(6);
  });

  it('python3-sentry-sdk presents the key in X-Sentry-Auth', async () => {
    const resendId = randomBytes(16).toString('hex');
    const run = await runPythonSentry({ dsn: dsnOf(c.url, 'shop_dsn', 9), resend_id: resendId });
    expect(run.statuses).toEqual([200, 200, 200, 200]);
    const wrong = await runPythonSentry({ dsn: dsnOf(c.url, 'nokey', 9), resend_id: resendId });
    // Its four events, and the client report of their loss it sends after them.
    expect(wrong.statuses.length).toBeGreaterThanOrEqual(4);
    expect(new Set(wrong.statuses)).toEqual(new Set([401]));
    await waitFor('the Python exception', async () => {
      const res = await fetch(`${c.url}/v1/events?app=${app}&type=error`, { headers: readHeaders });
      const body = (await res.json()) as { events: any[] };
      return body.events.some((e) => e.id === uuidOf(run.exception_id));
    });
  });
});
