import { freePort, startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { metric } from '../support/events';
import { tempSqlitePath } from '../support/postgres';

/** Only the canonical paths exist, with the defaults a user gets. */
describe('strict, case-sensitive routing', () => {
  let c: CollectorProcess;
  let otlpUrl: string;
  beforeAll(async () => {
    const otlpPort = await freePort();
    otlpUrl = `http://127.0.0.1:${otlpPort}`;
    c = await startCollectorProcess(
      { SLUICE_SQLITE_PATH: tempSqlitePath('routing'), SLUICE_OTLP_PORT: String(otlpPort) },
      { defaults: 'user' },
    );
  });
  afterAll(async () => {
    await c?.stop();
  });

  const post = (path: string) =>
    fetch(`${c.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ events: [metric('routing')] }),
    });

  it.each(['/V1/EVENTS', '/v1/events/', '/v1/Events', '/v1//events', '/v1/events/x'])(
    'POST %s is 404 not_found and stores nothing',
    async (path) => {
      const res = await post(path);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: 'not_found' });
    },
  );

  it.each(['/READYZ', '/readyz/', '/Metrics', '/v1/events/?app=a'])('GET %s is 404', async (path) => {
    expect((await fetch(`${c.url}${path}`)).status).toBe(404);
  });

  it('the canonical spellings answer, a query string included', async () => {
    expect((await post('/v1/events?source=test')).status).toBe(202);
    expect((await fetch(`${c.url}/readyz`)).status).toBe(200);
    const events = await fetch(`${c.url}/v1/events?app=routing`);
    expect(events.status).toBe(200);
  });

  it.each([
    ['PUT', '/v1/events', 'GET, HEAD, POST'],
    ['DELETE', '/v1/events', 'GET, HEAD, POST'],
    ['PATCH', '/v1/events', 'GET, HEAD, POST'],
    ['POST', '/v1/metrics', 'GET, HEAD'],
    ['POST', '/readyz', 'GET, HEAD'],
    ['PUT', '/', 'GET, HEAD'],
  ])('%s %s on a path that exists is 405 with Allow: %s', async (method, path, allow) => {
    const res = await fetch(`${c.url}${path}`, { method, headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe(allow);
    expect(await res.json()).toMatchObject({ error: 'method_not_allowed' });
  });

  it('PUT on a path that does not exist stays 404', async () => {
    expect((await fetch(`${c.url}/v1/event`, { method: 'PUT' })).status).toBe(404);
  });

  it('the OTLP port answers another method on its routes 405 with Allow: POST, and sends X-Request-Id like the main port', async () => {
    const get = await fetch(`${otlpUrl}/v1/logs`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(get.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const post = await fetch(`${otlpUrl}/v1/logs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'lb-1234' },
      body: JSON.stringify({ resourceLogs: [] }),
    });
    expect(post.status).toBe(200);
    expect(post.headers.get('x-request-id')).toBe('lb-1234');
    const main = await fetch(`${c.url}/readyz`, { headers: { 'x-request-id': 'lb-5678' } });
    expect(main.headers.get('x-request-id')).toBe('lb-5678');
  });
});
