import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deflateSync, gzipSync } from 'node:zlib';
import { generateKey } from '../../src/auth/api-keys';
import { waitFor } from '../support/http';
import { startInProcess, type InProcessCollector } from '../support/in-process';
import { lossMap } from '../support/loss-map';
import { tempSqlitePath } from '../support/postgres';
import { storedEvents } from './otlp-support';

/**
 * The Sentry endpoints as a client that does not follow the SDKs' script would use them, against
 * the defaults a user gets: bodies gzip or deflate and bounded after decompression, item types
 * Sluice does not store taken without a 4xx, and bodies that are not envelopes refused with 400.
 */
describe('Sentry endpoints, request by request', () => {
  let c: InProcessCollector;

  beforeAll(async () => {
    c = await startInProcess(
      { SLUICE_SQLITE_PATH: tempSqlitePath('sentry-requests'), SLUICE_MAX_BODY_BYTES: '64KiB' },
      { defaults: 'user' },
    );
  });

  afterAll(async () => {
    await c?.stop();
  });

  const post = (path: string, body: Buffer | string, headers: Record<string, string> = {}) =>
    fetch(`${c.url}${path}`, { method: 'POST', headers, body: body as unknown as BodyInit });

  const envelope = (project: number, eventId: string, extra = '') =>
    `{"event_id":"${eventId}"}\n{"type":"event"}\n${JSON.stringify({
      event_id: eventId,
      timestamp: Date.now() / 1000,
      exception: { values: [{ type: 'Boom', value: `boom ${project}` }] },
    })}\n${extra}`;

  it('takes gzip and deflate envelopes, and every item type it does not store, answering 200 with the id', async () => {
    const others =
      '{"type":"session"}\n{"sid":"x"}\n{"type":"attachment","length":3}\nabc\n{"type":"replay_recording","length":2}\n{}\n{"type":"check_in"}\n{}\n{"type":"something_new"}\n{}\n';
    const id1 = 'a'.repeat(32);
    const id2 = 'b'.repeat(32);
    const gz = await post('/api/31/envelope/', gzipSync(envelope(31, id1, others)), {
      'content-encoding': 'gzip',
    });
    expect(gz.status).toBe(200);
    expect(await gz.json()).toEqual({ id: id1 });
    const df = await post('/api/31/envelope/', deflateSync(envelope(31, id2)), {
      'content-encoding': 'deflate',
    });
    expect(df.status).toBe(200);
    const events = await waitFor('2 errors', async () => {
      const e = await storedEvents(c.url, 'sentry-31');
      return e.length >= 2 ? e : null;
    });
    expect(events.map((e) => e.error.message).sort()).toEqual(['boom 31', 'boom 31']);
  });

  it('bounds a body after decompression: a gzip bomb is 413', async () => {
    const bomb = gzipSync(Buffer.alloc(10 * 1024 * 1024, 0x20));
    expect(bomb.length).toBeLessThan(64 * 1024);
    const res = await post('/api/32/envelope/', bomb, { 'content-encoding': 'gzip' });
    expect(res.status).toBe(413);
  });

  it('refuses what is not an envelope or not an event with 400, and an unknown encoding with 415', async () => {
    expect((await post('/api/33/envelope/', 'not an envelope')).status).toBe(400);
    expect((await post('/api/33/envelope/', '{}\n{"type":"event","length":500}\n{}')).status).toBe(400);
    expect((await post('/api/33/store/', '{"message": ')).status).toBe(400);
    expect((await post('/api/33/store/', '{}', { 'content-encoding': 'br' })).status).toBe(415);
    expect((await post('/api/not-a-number/store/', '{}')).status).toBe(404);
    expect((await fetch(`${c.url}/api/33/store/`)).status).toBe(404);
  });

  it('counts an event it cannot take (a time outside the window) as lost at the collector', async () => {
    const res = await post('/api/34/store/', JSON.stringify({ message: 'old', timestamp: 1 }));
    expect(res.status).toBe(200);
    const m = await waitFor('the loss', async () => {
      const map = await lossMap(c.url, 'sentry-34');
      return map.lost === 1 ? map : null;
    });
    expect(m).toMatchObject({ generated: 1, stored: 0, losses: { collector: { ts_out_of_range: 1 } } });
  });
});

describe('Sentry endpoints with auth on, a key in the envelope header', () => {
  let c: InProcessCollector;
  const app = `tunnel-${process.pid}`;

  beforeAll(async () => {
    const keysFile = path.join(os.tmpdir(), `sentry-tunnel-keys-${process.pid}-${Date.now()}.json`);
    writeFileSync(keysFile, JSON.stringify({ keys: [generateKey('ingest', 'tunnel_key', app).entry] }));
    c = await startInProcess(
      { SLUICE_SQLITE_PATH: tempSqlitePath('sentry-tunnel'), SLUICE_AUTH_KEYS_FILE: keysFile },
      { defaults: 'user' },
    );
  });

  afterAll(async () => {
    await c?.stop();
  });

  it("takes the key of the envelope header's dsn when the request carries none, and 401 without any", async () => {
    const item = JSON.stringify({ exception: { values: [{ type: 'Boom', value: 'through a tunnel' }] } });
    const body = (dsn: string) => `${JSON.stringify({ dsn })}\n{"type":"event"}\n${item}\n`;
    const post = (b: string) => fetch(`${c.url}/api/1/envelope/`, { method: 'POST', body: b });
    expect((await post(body('https://tunnel_key@sentry.example/1'))).status).toBe(200);
    expect((await post(body('https://other_key@sentry.example/1'))).status).toBe(401);
    expect((await post(`{}\n{"type":"event"}\n${item}\n`)).status).toBe(401);
  });
});
