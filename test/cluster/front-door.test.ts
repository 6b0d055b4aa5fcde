/**
 * What the outside sees of a cluster: the rendered haproxy.cfg in a real HAProxy, started the way
 * `sluice cluster` starts it. The public frontends forward the API only; HAProxy answers 404
 * itself for everything else, the stats page asks for credentials, and the exporter serves
 * HAProxy's metrics.
 */
import { request } from 'node:http';
import { log } from '../support/events';
import { postEvents } from '../support/http';
import { startTestCluster, type TestCluster } from './support/test-cluster';

let t: TestCluster;

beforeAll(async () => {
  t = await startTestCluster('front_door');
}, 90_000);

afterAll(async () => {
  await t?.close();
});

interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** One request with `path` sent exactly as written (fetch would resolve `..` before sending). */
function rawRequest(
  origin: string,
  path: string,
  o: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawAnswer> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: hostname, port, path, method: o.method ?? 'GET', headers: o.headers, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(o.body);
  });
}

function basic(user: string, password: string): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` };
}

describe('the public front door (haproxy.cfg through `sluice cluster`)', () => {
  it('forwards /v1/... to the collectors', async () => {
    const posted = await postEvents(t.cluster.url, [log('front-door')]);
    expect(posted.status).toBe(202);
    expect(posted.headers.get('x-served-by')).toMatch(/^collector[123]$/);
    const read = await rawRequest(t.cluster.url, '/v1/events?app=front-door');
    expect({ status: read.status, servedBy: read.headers['x-served-by'] }).toEqual({
      status: 200,
      servedBy: expect.stringMatching(/^collector[123]$/),
    });
  });

  it('answers 404 itself for the collectors’ /metrics, /readyz, /livez, console, /pipeline and any other path', async () => {
    // HAProxy's 404 is a collector's own answer to an unknown route, body for body.
    const unknown = '/no-such-route/"quoted"';
    const fromCollector = await rawRequest(t.cluster.collectors[0]?.url ?? '', unknown);
    const fromHaproxy = await rawRequest(t.cluster.url, unknown);
    expect(fromCollector.status).toBe(404);
    expect({ status: fromHaproxy.status, body: JSON.parse(fromHaproxy.body) }).toEqual({
      status: 404,
      body: JSON.parse(fromCollector.body),
    });
    for (const path of [
      '/metrics',
      '/readyz',
      '/livez',
      '/',
      '/pipeline',
      '/console/console.js',
      '/v1',
      '/V1/events',
      '/v1/../metrics',
      '/v1/%2e%2e/metrics',
      '/v1//events',
    ]) {
      const answer = await rawRequest(t.cluster.url, path);
      expect({ path, status: answer.status, servedBy: answer.headers['x-served-by'] }).toEqual({
        path,
        status: 404,
        servedBy: undefined,
      });
      expect(JSON.parse(answer.body)).toEqual({ error: 'not_found', message: `No route for GET ${path}.` });
    }
    // The collectors themselves still serve them, to HAProxy's checks, Prometheus and operators.
    for (const path of ['/metrics', '/pipeline', '/']) {
      const direct = await rawRequest(t.cluster.collectors[0]?.url ?? '', path);
      expect({ path, status: direct.status }).toEqual({ path, status: 200 });
    }
  });

  it('answers an outer load balancer’s health check itself', async () => {
    const health = await rawRequest(t.cluster.url, '/healthz');
    expect({ status: health.status, servedBy: health.headers['x-served-by'] }).toEqual({
      status: 200,
      servedBy: undefined,
    });
  });

  it('asks for credentials on the stats page', async () => {
    const stats = new URL(t.cluster.statsUrl);
    const anonymous = await rawRequest(stats.origin, stats.pathname);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['www-authenticate']).toMatch(/^Basic realm="Sluice HAProxy"/);
    const wrong = await rawRequest(stats.origin, stats.pathname, {
      headers: basic(t.cluster.statsCredentials.user, 'not-the-password'),
    });
    expect(wrong.status).toBe(401);
    const { user, password } = t.cluster.statsCredentials;
    expect({ user, password }).toEqual({ user: 'admin', password: 'admin' }); // the documented local default
    const allowed = await rawRequest(stats.origin, `${stats.pathname};csv`, {
      headers: basic(user, password),
    });
    expect(allowed.status).toBe(200);
    expect(allowed.body).toContain('collectors,collector1,');
  });

  it('serves HAProxy’s metrics on the exporter port only', async () => {
    const exporter = await fetch(t.cluster.haproxyMetricsUrl);
    expect(exporter.status).toBe(200);
    expect(await exporter.text()).toContain('haproxy_backend_active_servers{proxy="collectors"} 3');
    const stats = new URL(t.cluster.statsUrl);
    expect((await rawRequest(stats.origin, '/metrics')).status).toBe(404);
  });

  it('forwards only the three OTLP paths from the OTLP port', async () => {
    for (const path of ['/metrics', '/readyz', '/v1/events', '/v1/logs/extra', '/']) {
      const answer = await rawRequest(t.cluster.otlpUrl, path, { method: 'POST', body: '{}' });
      expect({ path, status: answer.status }).toEqual({ path, status: 404 });
    }
  });

  it('answers 503 on /healthz once no collector is in service', async () => {
    await Promise.all(t.cluster.collectors.map((c) => c.kill()));
    for (const c of t.cluster.collectors) await t.cluster.waitForServer(c.name, 'DOWN', 10_000);
    const health = await rawRequest(t.cluster.url, '/healthz');
    expect(health.status).toBe(503);
  });
});
