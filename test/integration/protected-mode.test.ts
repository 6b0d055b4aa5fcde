import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateKey } from '../../src/auth/api-keys';
import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { log } from '../support/events';
import { getJson, waitFor } from '../support/http';
import { makeOtherHost, namespacesUnavailable, type OtherHost } from '../support/network-namespace';
import { tempSqlitePath } from '../support/postgres';

/**
 * Protected by default, tested as an attacker would: from another host (a network namespace this
 * test makes, joined by a veth pair), against a collector process started as `npm start` starts
 * it (listening on every interface, keys off, the defaults a user gets). Stored data (the read API,
 * the console, /pipeline) answers loopback clients only; apps may still send; Prometheus and the
 * load balancer still reach /metrics and /readyz.
 */
const unavailable = namespacesUnavailable();
if (unavailable !== null) {
  console.warn(`protected-mode.test.ts skipped: no network namespace can be made here (${unavailable})`);
}
const describeWithOtherHost = unavailable === null ? describe : describe.skip;

const READ_PATHS = [
  '/v1/events?app=web-shop',
  '/v1/metrics?name=render.frame_drop',
  '/v1/metrics/names',
  '/v1/apps',
  '/v1/error-groups',
  '/v1/outcomes?app=web-shop',
  '/pipeline',
  '/',
];

describeWithOtherHost('protected mode, from another host', () => {
  let other: OtherHost;
  const started: CollectorProcess[] = [];

  beforeAll(async () => {
    other = await makeOtherHost('pm');
  });

  afterAll(async () => {
    for (const c of started) await c.stop();
    await other?.remove();
  });

  async function collector(env: Record<string, string>): Promise<{ c: CollectorProcess; remote: string }> {
    const c = await startCollectorProcess(
      // As `npm start` listens: every interface. Info level, for the start line; no drain delay at
      // stop (no load balancer watches these).
      {
        SLUICE_HOST: '0.0.0.0',
        SLUICE_LOG_LEVEL: 'info',
        SLUICE_DRAIN_DELAY_MS: '0',
        SLUICE_SQLITE_PATH: tempSqlitePath('pm'),
        ...env,
      },
      { defaults: 'user' },
    );
    started.push(c);
    return { c, remote: `http://${other.hostAddress}:${c.port}` };
  }

  // The process answers /readyz before its stdout has necessarily reached this process: wait for it.
  const startLine = (c: CollectorProcess): Promise<string> =>
    waitFor('the start line', () => c.output.find((l) => l.includes('"msg":"sluice listening')) ?? null);

  it('with no keys: reads, the console and /pipeline answer loopback only, writes are open, /metrics too', async () => {
    const { c, remote } = await collector({});
    expect(await startLine(c)).toContain(
      'auth off: writes open to every client; reads, console and /pipeline loopback clients only',
    );
    expect(await startLine(c)).toContain('SLUICE_PROTECTED_MODE=off');

    // An app on another host sends, and is taken.
    const event = log('web-shop');
    const sent = await other.fetch(`${remote}/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ events: [event] }),
    });
    expect(sent.status).toBe(202);

    for (const p of READ_PATHS) {
      const res = await other.fetch(`${remote}${p}`);
      expect({ path: p, status: res.status }).toEqual({ path: p, status: 403 });
      const body = JSON.parse(res.body) as { error: string; message: string };
      expect(body.error).toBe('protected_mode');
      expect(body.message).toContain('SLUICE_AUTH_KEYS_FILE');
      expect(body.message).toContain('SLUICE_PROTECTED_MODE=off');
    }
    // A forwarding header cannot make a client elsewhere local.
    const spoofed = await other.fetch(`${remote}/v1/events?app=web-shop`, {
      headers: { 'x-forwarded-for': '127.0.0.1', forwarded: 'for=127.0.0.1' },
    });
    expect(spoofed.status).toBe(403);

    // Monitoring keeps working from elsewhere, as documented.
    expect((await other.fetch(`${remote}/metrics`)).status).toBe(200);
    expect((await other.fetch(`${remote}/readyz`)).status).toBe(200);
    expect((await other.fetch(`${remote}/livez`)).status).toBe(200);

    // On this host the event reads back; through a local proxy that forwarded another host's
    // client, it does not.
    const local = await waitFor('the event on loopback', async () => {
      const r = await getJson(`${c.url}/v1/events?app=web-shop`);
      return r.status === 200 && r.body.events.length === 1 ? r.body.events : null;
    });
    expect(local[0].id).toBe(event.id);
    expect((await fetch(`${c.url}/`)).status).toBe(200);
    expect(
      (await getJson(`${c.url}/v1/apps`, { 'x-forwarded-for': `${other.hostAddress}, 127.0.0.1` })).status,
    ).toBe(403);
    expect((await getJson(`${c.url}/v1/apps`, { forwarded: 'for="[2001:db8::1]:4711"' })).status).toBe(403);
    expect((await getJson(`${c.url}/v1/apps`, { 'x-forwarded-for': '127.0.0.1' })).status).toBe(200);
  });

  it('with keys: a read token reads from anywhere, nothing reads without one', async () => {
    const read = generateKey('read', 'dashboard');
    const ingest = generateKey('ingest', 'shop', 'web-shop');
    const keys = path.join(os.tmpdir(), `sluice-pm-keys-${process.pid}.json`);
    writeFileSync(keys, JSON.stringify({ keys: [read.entry, ingest.entry] }));
    const { c, remote } = await collector({ SLUICE_AUTH_KEYS_FILE: keys });
    expect(await startLine(c)).toContain(
      'auth on: writes ingest keys; reads, console and /pipeline read tokens',
    );
    expect((await other.fetch(`${remote}/v1/apps`)).status).toBe(401);
    const res = await other.fetch(`${remote}/v1/apps`, {
      headers: { authorization: `Bearer ${read.secret}` },
    });
    expect(res.status).toBe(200);
    // The console's files hold no data: with keys on, they load from anywhere and ask for a key.
    expect((await other.fetch(`${remote}/`)).status).toBe(200);
  });

  it('with SLUICE_PROTECTED_MODE=off: every client reads, and the start line says so', async () => {
    const { c, remote } = await collector({ SLUICE_PROTECTED_MODE: 'off' });
    expect(await startLine(c)).toContain('anyone who reaches the port reads every event');
    for (const p of READ_PATHS)
      expect({ path: p, status: (await other.fetch(`${remote}${p}`)).status }).toEqual({
        path: p,
        status: 200,
      });
  });
});
