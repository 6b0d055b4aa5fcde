import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { metric } from '../support/events';
import { tempSqlitePath } from '../support/postgres';

/** Only the canonical paths exist, with the defaults a user gets. */
describe('strict, case-sensitive routing', () => {
  let c: CollectorProcess;
  beforeAll(async () => {
    c = await startCollectorProcess({ SLUICE_SQLITE_PATH: tempSqlitePath('routing') }, { defaults: 'user' });
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
});
