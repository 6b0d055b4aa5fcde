import { waitFor } from '../support/http';
import { postEvents } from '../support/http';
import { errorEvent, metric } from '../support/events';
import { startPrometheus, type RunningPrometheus } from './support/prometheus';
import { startTestCluster, type TestCluster } from './support/test-cluster';

let t: TestCluster;
let prometheus: RunningPrometheus;

beforeAll(async () => {
  t = await startTestCluster('prometheus');
  const statsHost = new URL(t.cluster.haproxyMetricsUrl).host;
  prometheus = await startPrometheus([
    { job: 'sluice', targets: t.cluster.collectors.map((c) => `127.0.0.1:${c.port}`) },
    { job: 'haproxy', targets: [statsHost] },
  ]);
}, 90_000);

afterAll(async () => {
  await prometheus?.stop();
  await t?.close();
});

describe('Prometheus scraping the cluster', () => {
  it('scrapes every collector and HAProxy; sluice_* series read back through its HTTP API', async () => {
    const sent = { metric: 0, error: 0 };
    for (let i = 0; i < 30; i++) {
      const events = [metric('prom'), metric('prom'), errorEvent('prom')];
      const answer = await postEvents(t.cluster.url, events);
      expect(answer.status).toBe(202);
      sent.metric += 2;
      sent.error += 1;
    }
    await waitFor(
      'every target up in Prometheus',
      async () => (await prometheus.query('up')).filter((s) => s.value === 1).length === 4,
      20_000,
    );
    // Scraped after the last request: the counters hold every event sent, spread over three instances.
    await waitFor(
      'the accepted counters to reach what was sent',
      async () => {
        const byType = await prometheus.query('sum by (type) (sluice_events_accepted_total{job="sluice"})');
        const total = (type: string) => byType.find((s) => s.metric.type === type)?.value ?? 0;
        return total('metric') === sent.metric && total('error') === sent.error;
      },
      20_000,
    );
    const byInstance = await prometheus.query('sum by (instance) (sluice_events_accepted_total)');
    expect(byInstance.map((s) => s.metric.instance).sort()).toEqual(
      t.cluster.collectors.map((c) => `127.0.0.1:${c.port}`).sort(),
    );
    for (const s of byInstance) expect(s.value).toBeGreaterThan(0);

    const lanes = await prometheus.query('sluice_lane_capacity_events');
    expect(lanes.length).toBe(6); // two lanes on each of three collectors
    const storageUp = await prometheus.query('sum(sluice_storage_up)');
    expect(storageUp[0]?.value).toBe(3);

    const active = await prometheus.query('haproxy_backend_active_servers{proxy="collectors"}');
    expect(active[0]?.value).toBe(3);
    const responses = await prometheus.query(
      'sum(haproxy_backend_http_responses_total{proxy="collectors",code="2xx"})',
    );
    expect(responses[0]?.value).toBeGreaterThanOrEqual(30);
  }, 60_000);
});
