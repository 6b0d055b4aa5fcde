import { randomUUID } from 'node:crypto';
import { getJson, postEvents } from '../support/http';
import { log } from '../support/events';
import { startTestCluster, type TestCluster } from './support/test-cluster';

let t: TestCluster;

beforeAll(async () => {
  // stored: a 202 means committed, so a read right after it must see the event.
  t = await startTestCluster('routing', { env: { SLUICE_ACK: 'stored' } });
}, 90_000);

afterAll(async () => {
  await t?.close();
});

/** `sluice_events_accepted_total` summed over labels, read from a collector's own /metrics. */
async function acceptedOn(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('sluice_events_accepted_total{'))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

describe('HAProxy in front of three collectors', () => {
  it('sends requests round-robin to every collector, and says which one answered', async () => {
    const { cluster } = t;
    const app = `rr-${randomUUID().slice(0, 8)}`;
    const servedBy: Record<string, number> = {};
    const requestIds = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const answer = await postEvents(cluster.url, [log(app)]);
      expect(answer.status).toBe(202);
      const by = answer.headers.get('x-served-by') ?? 'none';
      servedBy[by] = (servedBy[by] ?? 0) + 1;
      requestIds.add(answer.headers.get('x-request-id') ?? '');
    }
    // Round-robin over three healthy servers: exactly one in three each.
    expect(servedBy).toEqual({ collector1: 10, collector2: 10, collector3: 10 });
    // HAProxy's unique-id-format, honoured by each collector (it echoes X-Request-Id): one per request.
    expect(requestIds.size).toBe(30);
    for (const id of requestIds)
      expect(id).toMatch(/^[0-9A-F]+:[0-9A-F]+_[0-9A-F]+:[0-9A-F]+_[0-9A-F]+_[0-9A-F]+:[0-9A-F]+$/);

    // The same from the two other points of view: HAProxy's stats and each collector's metrics.
    const servers = await cluster.servers();
    expect(servers.map((s) => s.status)).toEqual(['UP', 'UP', 'UP']);
    for (const s of servers) expect(s.responses2xx).toBeGreaterThanOrEqual(10);
    for (const c of cluster.collectors) expect(await acceptedOn(c.url)).toBeGreaterThanOrEqual(10);
  });

  it('keeps a request id the client sent', async () => {
    const answer = await postEvents(t.cluster.url, [log('rid')], {
      headers: { 'x-request-id': 'sdk-chosen-id-42' },
    });
    expect(answer.status).toBe(202);
    expect(answer.headers.get('x-request-id')).toBe('sdk-chosen-id-42');
  });

  it('makes an event accepted through any collector readable through every collector', async () => {
    const { cluster } = t;
    const app = `shared-${randomUUID().slice(0, 8)}`;
    const ids: string[] = [];
    for (const c of cluster.collectors) {
      const event = log(app, { name: `via.${c.name}` });
      const answer = await postEvents(c.url, [event]);
      expect(answer.status).toBe(202);
      ids.push(event.id as string);
    }
    for (const url of [...cluster.collectors.map((c) => c.url), cluster.url]) {
      const page = await getJson(`${url}/v1/events?app=${app}&limit=100`);
      expect(page.status).toBe(200);
      const seen = (page.body.events as Array<{ id: string }>).map((e) => e.id).sort();
      expect({ url, seen }).toEqual({ url, seen: [...ids].sort() });
    }
  });

  it('answers the stats page and HAProxy’s Prometheus exporter', async () => {
    const stats = await t.cluster.haproxy.statsPage();
    expect(stats.status).toBe(200);
    const metrics = await (await fetch(t.cluster.haproxyMetricsUrl)).text();
    expect(metrics).toContain('haproxy_backend_active_servers{proxy="collectors"} 3');
  });
});
