import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateKey } from '../../src/auth/api-keys';
import { errorEvent, metric } from '../support/events';
import { postEvents } from '../support/http';
import { startInProcess, type InProcessCollector } from '../support/in-process';
import { tempSqlitePath } from '../support/postgres';

const dir = mkdtempSync(path.join(os.tmpdir(), 'sluice-auth-'));
const shopOld = generateKey('ingest', 'shop-2026-11', 'web-shop');
const shopNew = generateKey('ingest', 'shop-2026-12', 'web-shop');
const admin = generateKey('ingest', 'admin-app', 'admin');
const grafana = generateKey('read', 'grafana');
const keysFile = path.join(dir, 'keys.json');
writeFileSync(keysFile, JSON.stringify({ keys: [shopOld.entry, shopNew.entry, admin.entry, grafana.entry] }));

describe('API keys', () => {
  let c: InProcessCollector;

  beforeAll(async () => {
    c = await startInProcess({
      SLUICE_SQLITE_PATH: tempSqlitePath('auth'),
      SLUICE_AUTH_KEYS_FILE: keysFile,
      SLUICE_FLUSH_INTERVAL_MS: '5',
      SLUICE_CORS_ORIGINS: 'https://shop.example',
    });
  });

  afterAll(async () => {
    await c?.stop();
  });

  const write = (secret: string | null, events = [metric('web-shop')]) =>
    postEvents(c.url, events, secret ? { headers: { 'x-api-key': secret } } : {});
  const read = (secret: string | null, header = 'authorization') =>
    fetch(`${c.url}/v1/events?app=web-shop`, {
      headers: secret ? { [header]: header === 'authorization' ? `Bearer ${secret}` : secret } : {},
    });

  it('no key → 401 unauthorized', async () => {
    const res = await write(null);
    expect(res).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
    expect((await read(null)).status).toBe(401);
  });

  it('a wrong key → 401', async () => {
    expect((await write('sk_in_not-a-key')).status).toBe(401);
    expect((await read('sk_rd_not-a-key')).status).toBe(401);
  });

  it('an ingest key writes for its own app only: other apps are rejected per event', async () => {
    const res = await write(shopOld.secret, [metric('web-shop'), metric('admin'), errorEvent('admin')]);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      accepted: 1,
      rejected: [
        {
          index: 1,
          reason: 'app_mismatch',
          field: 'source.app',
          hint: 'source.app must be the app this API key was made for',
        },
        { index: 2, reason: 'app_mismatch', field: 'source.app' },
      ],
    });
  });

  it('a read token cannot write; an ingest key cannot read', async () => {
    const w = await write(grafana.secret);
    expect(w.status).toBe(401);
    expect(w.body.message).toMatch(/read token cannot write/);
    const r = await read(shopOld.secret);
    expect(r.status).toBe(401);
    expect((await r.json()).message).toMatch(/ingest key cannot read/);
  });

  it('a read token reads (Bearer or X-Api-Key)', async () => {
    expect((await read(grafana.secret)).status).toBe(200);
    expect((await read(grafana.secret, 'x-api-key')).status).toBe(200);
  });

  it('key rotation: two valid keys for one app both write', async () => {
    expect((await write(shopOld.secret)).status).toBe(202);
    expect((await write(shopNew.secret)).status).toBe(202);
  });

  it('health and metrics stay open; failures are counted by reason', async () => {
    expect((await fetch(`${c.url}/readyz`)).status).toBe(200);
    const text = await (await fetch(`${c.url}/metrics`)).text();
    expect(text).toMatch(/sluice_auth_failures_total\{reason="missing"\} [1-9]/);
    expect(text).toMatch(/sluice_auth_failures_total\{reason="wrong_kind"\} [1-9]/);
  });

  it('CORS: a preflight from an allowed origin is answered; others get no CORS headers', async () => {
    const pre = await fetch(`${c.url}/v1/events`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://shop.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, x-api-key',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/X-Api-Key/);
    const post = await postEvents(c.url, [metric('web-shop')], {
      headers: { origin: 'https://shop.example', 'x-api-key': shopNew.secret },
    });
    expect(post.status).toBe(202);
    expect(post.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    expect(post.headers.get('access-control-expose-headers')).toMatch(/Retry-After/);
    const evil = await fetch(`${c.url}/v1/events`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(evil.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('CORS for the read API: a dashboard on an allowed origin reads with a read token', async () => {
    for (const path of ['/v1/events', '/v1/metrics', '/v1/metrics/names', '/v1/apps', '/v1/error-groups']) {
      const pre = await fetch(`${c.url}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://shop.example',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization',
        },
      });
      expect({ path, status: pre.status }).toEqual({ path, status: 204 });
      expect(pre.headers.get('access-control-allow-origin')).toBe('https://shop.example');
      expect(pre.headers.get('access-control-allow-methods')).toMatch(/\bGET\b/);
      expect(pre.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    }
    const answer = await fetch(`${c.url}/v1/apps`, {
      headers: { origin: 'https://shop.example', authorization: `Bearer ${grafana.secret}` },
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    const evil = await fetch(`${c.url}/v1/apps`, {
      headers: { origin: 'https://evil.example', authorization: `Bearer ${grafana.secret}` },
    });
    expect(evil.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('the read routes, GET /pipeline and the console data need a read token; the console page does not', async () => {
    for (const path of ['/v1/apps', '/v1/metrics/names', '/v1/error-groups', '/pipeline']) {
      expect({ path, status: (await fetch(`${c.url}${path}`)).status }).toEqual({ path, status: 401 });
      const ingest = await fetch(`${c.url}${path}`, { headers: { 'x-api-key': shopNew.secret } });
      expect({ path, status: ingest.status }).toEqual({ path, status: 401 });
      const token = await fetch(`${c.url}${path}`, {
        headers: { authorization: `Bearer ${grafana.secret}` },
      });
      expect({ path, status: token.status }).toEqual({ path, status: 200 });
    }
    // The page and its files hold no data: the console asks for the token before any is shown.
    expect((await fetch(`${c.url}/`)).status).toBe(200);
  });
});

describe('intake configuration files', () => {
  const CLI = path.resolve(__dirname, '../../dist/src/cli.js');
  const run = (env: Record<string, string>) =>
    spawnSync(process.execPath, [CLI, 'serve'], {
      env: { PATH: process.env.PATH ?? '', SLUICE_SQLITE_PATH: tempSqlitePath('cfgfile'), ...env },
      encoding: 'utf8',
      timeout: 20_000,
    });

  it.each([
    ['not JSON', '{"web-shop": 10'],
    ['an array', '[1, 2]'],
    ['a negative limit', '{"web-shop": -5}'],
    ['a string limit', '{"web-shop": "fast"}'],
  ])('a malformed overrides file (%s) stops start-up with a clear message', (_label, text) => {
    const file = path.join(dir, `overrides-${Math.random()}.json`);
    writeFileSync(file, text);
    const r = run({ SLUICE_RATE_LIMIT_OVERRIDES_FILE: file });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('invalid configuration: SLUICE_RATE_LIMIT_OVERRIDES_FILE=');
  });

  it('a missing keys file or a malformed key stops start-up', () => {
    expect(run({ SLUICE_AUTH_KEYS_FILE: path.join(dir, 'nope.json') }).stderr).toMatch(
      /SLUICE_AUTH_KEYS_FILE=.*cannot be read/,
    );
    const bad = path.join(dir, 'bad-keys.json');
    writeFileSync(bad, JSON.stringify({ keys: [{ id: 'x', kind: 'ingest', sha256: 'abc' }] }));
    const r = run({ SLUICE_AUTH_KEYS_FILE: bad });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/keys\[0\]\.sha256/);
  });

  it('SLUICE_RATE_LIMIT_OVERRIDES with a bad entry names the variable', () => {
    const r = run({ SLUICE_RATE_LIMIT_OVERRIDES: 'web-shop=fast' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('SLUICE_RATE_LIMIT_OVERRIDES=');
  });
});
