/**
 * Tier 3 as Prometheus sees it: a real Prometheus (1 s scrapes and rule evaluations, the rules of
 * deploy/prometheus/) scraping three collectors and HAProxy. After some traffic (events taken,
 * events rate limited, invalid ones, a bad request), every Prometheus query of the Grafana
 * dashboards and every recorded measure answers series with the labels its panel or alert reads
 * and sensible values; the queue's (tier 4: prometheus-queue.test.ts) answer nothing here.
 */
import { errorEvent, metric } from '../support/events';
import { postEventsRead, waitFor } from '../support/http';
import {
  RULE_FILES,
  between,
  alertReads,
  checkQueries,
  nonNegative,
  oneOf,
  panelAndRuleQueries,
  positive,
  renamedLabelSeries,
  type Expectation,
} from './support/dashboard-promql';
import { startPrometheus, type RunningPrometheus } from './support/prometheus';
import { startTestCluster, type TestCluster } from './support/test-cluster';
import { JOB_NAMES } from '../../src/scheduler/lock-keys';

let t: TestCluster;
let prometheus: RunningPrometheus;

beforeAll(async () => {
  t = await startTestCluster('prometheus', {
    env: {
      // The limit a user gets: the burst below is rate limited.
      SLUICE_RATE_LIMIT: '100',
      // A burst of one second of the limit, so that the traffic below is throttled in part.
      SLUICE_RATE_LIMIT_BURST: '1s',
      // Every job runs within the test, so each has a last success and runs to count.
      SLUICE_JOB_DOWNSAMPLE_INTERVAL_MS: '1000',
      SLUICE_JOB_PURGE_INTERVAL_MS: '2000',
      SLUICE_JOB_PARTITIONS_INTERVAL_MS: '2000',
      SLUICE_JOB_COMPACT_OUTCOMES_INTERVAL_MS: '2000',
      SLUICE_JOB_MERGE_METRIC_BLOCKS_INTERVAL_MS: '2000',
    },
  });
  const statsHost = new URL(t.cluster.haproxyMetricsUrl).host;
  prometheus = await startPrometheus(
    [
      { job: 'sluice', targets: t.cluster.collectors.map((c) => `127.0.0.1:${c.port}`) },
      { job: 'haproxy', targets: [statsHost] },
    ],
    { ruleFiles: RULE_FILES },
  );
}, 90_000);

afterAll(async () => {
  await prometheus?.stop();
  await t?.close();
});

/** Rates over a window that holds the test's traffic however slow the box (Grafana: `$__rate_interval`). */
const JOBS: readonly string[] = JOB_NAMES;
const haproxyCodes = (v: number, l: Readonly<Record<string, string>>) => (l.code === '2xx' ? v > 0 : v >= 0);

/** What each dashboard query and recorded measure answers in tier 3, after the traffic below. */
const EXPECTED: Record<string, Expectation> = {
  'Ingest rate by type/A': {
    labels: ['type'],
    value: positive,
    covers: { label: 'type', values: ['metric', 'error'] },
  },
  'Stored rate by lane/A': {
    labels: ['lane'],
    value: positive,
    covers: { label: 'lane', values: ['error', 'standard'] },
  },
  'Stored rate by lane/B': { labels: [], value: nonNegative, count: 1 },
  '429s by reason/A': {
    labels: ['reason', 'type'],
    value: positive,
    covers: { label: 'reason', values: ['rate_limited'] },
  },
  'Requests refused, by code/A': {
    labels: ['code'],
    value: positive,
    covers: { label: 'code', values: ['invalid_json'] },
  },
  'Requests refused, by code/B': {
    labels: ['reason'],
    value: positive,
    covers: { label: 'reason', values: ['id_invalid'] },
  },
  'Lane depth/A': { labels: ['instance', 'lane'], value: nonNegative, count: 6 },
  'Lane depth/B': { labels: ['lane'], value: positive, count: 2 },
  'Flush latency/A': { labels: [], value: between(0, 5), count: 1 },
  'Flush latency/B': { labels: [], value: between(0, 5), count: 1 },
  'Flush latency/C': { labels: [], value: oneOf(0), count: 1 },
  // One line per job and result: the job is the scheduler's, not the scrape job.
  'Scheduler runs/A': {
    labels: ['job_name', 'result'],
    value: nonNegative,
    covers: { label: 'job_name', values: JOBS },
  },
  'Rate limiter fallback/A': { labels: ['instance'], value: oneOf(0), count: 3 },
  'HAProxy responses and retries/A': {
    labels: ['code'],
    value: haproxyCodes,
    covers: { label: 'code', values: ['2xx'] },
  },
  'HAProxy responses and retries/B': { labels: [], value: nonNegative, count: 1 },
  'HAProxy responses and retries/C': { labels: [], value: nonNegative, count: 1 },
  'Collectors in service/A': { labels: ['__name__', 'instance', 'job', 'proxy'], value: oneOf(3), count: 1 },
  'Collectors in service/B': { labels: [], value: oneOf(3), count: 1 },
  'Collectors in service/C': { labels: [], value: oneOf(3), count: 1 },
  'Collectors in service/D': { labels: [], value: oneOf(0), count: 1 },
  'Collectors in service/E': { labels: [], value: oneOf(3), count: 1 },
  'Stream backlog and its limit/A': 'none',
  'Stream backlog and its limit/B': 'none',
  'Consumer lag and messages in flight/A': 'none',
  'Consumer lag and messages in flight/B': 'none',
  'Publish latency/A': 'none',
  'Publish latency/B': 'none',
  'Publishes refused, by reason/A': 'none',
  'Stream replicas and leader moves/A': 'none',
  'Stream replicas and leader moves/B': 'none',
  'Stream replicas and leader moves/C': 'none',
  'Requests per published message/A': 'none',
  'Requests per published message/B': 'none',
  'Requests per published message/C': 'none',
  // Preset at 0: the first dropped row is an increase.
  'Events given up on/A': { labels: ['reason'], value: oneOf(0), count: 1 },
  'Events given up on/B': 'none',
  // No read standby in this setup.
  'Read standby lag/A': 'none',
  'Read standby lag/B': 'none',
  // The rules' measures.
  'sluice:lane_fill:ratio': {
    labels: ['__name__', 'instance', 'job', 'lane'],
    value: between(0, 1),
    count: 6,
  },
  'sluice:stream_fill:ratio': 'none',
  'sluice:events_throttled:share5m': {
    labels: ['__name__', 'reason'],
    value: (v, l) => (l.reason === 'rate_limited' ? v > 0 && v < 1 : v >= 0 && v <= 1),
    covers: { label: 'reason', values: ['rate_limited'] },
  },
  'sluice:scheduler_intervals_since_success': {
    labels: ['__name__', 'job_name'],
    value: between(0, 3),
    covers: { label: 'job_name', values: JOBS },
    count: JOBS.length,
  },
};

/** What the alerts say after that traffic: only the rate-limited share is above its threshold. */
const ALERTS_ACTIVE = ['SluiceRateLimitedShareHigh'];
const ALERTS_READING_TIER_4_ONLY = [
  'SluiceQueueDown',
  'SluiceStreamNearFull',
  'SluiceDeadLetters',
  'SluiceEventsExpired',
  'SluiceStreamBacklogOld',
];
/** Alerts on series only a collector with a read standby (SLUICE_DATABASE_READ_URL) exports. */
const ALERTS_READING_A_READ_STANDBY = ['SluiceReadStandbyBehind'];

/** Events taken, rate limited (an app above 100 events/s, counted cluster-wide in Redis) and invalid, and bad requests. */
async function sendTraffic(sent: { metric: number; error: number }, round: number): Promise<void> {
  // An app per round: two rounds of one app can fall in one rate-limit window (60 + 60 > 100).
  const app = `prom-${round}`;
  for (let i = 0; i < 30; i++) {
    const answer = await postEventsRead(t.cluster.url, [metric(app), metric(app), errorEvent(app)]);
    expect(answer.status).toBe(202);
    sent.metric += 2;
    sent.error += 1;
  }
  let throttled = 0;
  for (let i = 0; i < 3; i++) {
    const answer = await postEventsRead(
      t.cluster.url,
      Array.from({ length: 150 }, () => metric('prom-burst')),
    );
    sent.metric += answer.body.accepted ?? 0;
    throttled += answer.body.throttled?.length ?? 0;
  }
  expect(throttled).toBeGreaterThan(0);
  // To each collector: its labelled counters then increase in the second round on every instance.
  for (const c of t.cluster.collectors) {
    const url = `http://127.0.0.1:${c.port}`;
    const invalid = await postEventsRead(url, [metric('prom', { id: 'not-a-uuid' })]);
    expect(invalid.body.rejected).toHaveLength(1);
    expect((await postEventsRead(url, null, { raw: '{"events": [' })).status).toBe(400);
  }
}

describe('Prometheus scraping the cluster', () => {
  it('every dashboard query and rule answers what its panel or alert reads, after traffic', async () => {
    await waitFor(
      'every target up in Prometheus',
      async () => (await prometheus.query('up')).filter((s) => s.value === 1).length === 4,
      20_000,
    );
    // Two rounds, each scraped before the next: a labelled counter's series appears at its first
    // increment, so only the second round is an increase Prometheus can see (a rate above 0).
    const sent = { metric: 0, error: 0 };
    for (let round = 0; round < 2; round++) {
      await sendTraffic(sent, round);
      // Scraped after the last request: the counters hold every event taken, spread over three instances.
      await waitFor(
        'the accepted counters to reach what was taken',
        async () => {
          const byType = await prometheus.query('sum by (type) (sluice_events_accepted_total{job="sluice"})');
          const total = (type: string) => byType.find((s) => s.metric.type === type)?.value ?? 0;
          return total('metric') === sent.metric && total('error') === sent.error;
        },
        20_000,
      );
    }
    const byInstance = await prometheus.query('sum by (instance) (sluice_events_accepted_total)');
    expect(byInstance.map((s) => s.metric.instance).sort()).toEqual(
      t.cluster.collectors.map((c) => `127.0.0.1:${c.port}`).sort(),
    );

    // No series of a collector had a label renamed by Prometheus (job, instance are the scrape's).
    expect(await renamedLabelSeries(prometheus)).toEqual([]);

    const rules = await prometheus.rules();
    expect(await checkQueries(prometheus, panelAndRuleQueries(rules), EXPECTED, 15_000)).toEqual([]);

    // Every alert evaluates without error, reads metrics this setup exports (but the queue's), and
    // only the one whose condition the traffic made true is pending or firing.
    const names = await prometheus.metricNames();
    const alerts = rules.filter((r) => r.type === 'alerting');
    expect(alerts.length).toBeGreaterThanOrEqual(10);
    for (const a of alerts) {
      const reads = alertReads(a, names);
      const tier4Only =
        ALERTS_READING_TIER_4_ONLY.includes(a.name) || ALERTS_READING_A_READ_STANDBY.includes(a.name);
      expect(reads).toEqual({
        alert: a.name,
        health: 'ok',
        error: '',
        unknown: tier4Only ? reads.unknown : [],
      });
    }
    await waitFor(
      `only ${ALERTS_ACTIVE.join(', ')} pending or firing`,
      async () => {
        const now = await prometheus.rules();
        const active = now.filter((r) => r.type === 'alerting' && r.state !== 'inactive').map((r) => r.name);
        return JSON.stringify(active) === JSON.stringify(ALERTS_ACTIVE);
      },
      15_000,
    );
    const limited = (await prometheus.rules()).find((r) => r.name === 'SluiceRateLimitedShareHigh');
    expect(limited?.alerts?.map((a) => a.labels)).toEqual([
      { alertname: 'SluiceRateLimitedShareHigh', reason: 'rate_limited', severity: 'ticket' },
    ]);
  }, 90_000);
});
