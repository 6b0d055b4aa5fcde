/**
 * Tier 4 as Prometheus sees it: a real Prometheus (1 s scrapes and rule evaluations, the rules of
 * deploy/prometheus/) scraping an ingest collector (`sluice` job) and a worker (`sluice-worker`),
 * as deploy/prometheus/prometheus.yml names them. After some traffic, every Prometheus query of
 * the Grafana dashboards and every recorded measure answers series with the labels its panel or
 * alert reads and sensible values; the lanes' and HAProxy's (tier 3: prometheus.test.ts) answer
 * nothing here. Only the worker writes, so only it exports `sluice_storage_up`.
 */
import {
  createTestQueue,
  startWorkerProcess,
  type TestQueue,
  type WorkerProcess,
} from '../integration/queue-support';
import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { errorEvent, metric } from '../support/events';
import { postEvents, waitFor } from '../support/http';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
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
import { JOB_NAMES } from '../../src/scheduler/lock-keys';

let db: TestDatabase;
let q: TestQueue;
let collector: CollectorProcess;
let worker: WorkerProcess;
let prometheus: RunningPrometheus;

beforeAll(async () => {
  db = await createTestDatabase('prometheus_queue');
  q = await createTestQueue('prometheus');
  const env = { ...q.env, SLUICE_DATABASE_URL: db.url };
  // The worker first: it migrates the database the ingest collector's read API reads.
  worker = await startWorkerProcess({
    ...env,
    SLUICE_LOG_LEVEL: 'warn',
    SLUICE_HEALTH_INTERVAL_MS: '200',
    // Every job runs within the test, so each has a last success and runs to count.
    SLUICE_JOB_DOWNSAMPLE_INTERVAL_MS: '1000',
    SLUICE_JOB_PURGE_INTERVAL_MS: '2000',
    SLUICE_JOB_PARTITIONS_INTERVAL_MS: '2000',
    SLUICE_JOB_COMPACT_OUTCOMES_INTERVAL_MS: '2000',
    SLUICE_JOB_MERGE_METRIC_BLOCKS_INTERVAL_MS: '2000',
  });
  collector = await startCollectorProcess({
    ...env,
    SLUICE_MODE: 'ingest',
    SLUICE_HEALTH_INTERVAL_MS: '200',
  });
  prometheus = await startPrometheus(
    [
      { job: 'sluice', targets: [`127.0.0.1:${collector.port}`] },
      { job: 'sluice-worker', targets: [new URL(worker.url).host] },
    ],
    { ruleFiles: RULE_FILES },
  );
}, 90_000);

afterAll(async () => {
  await prometheus?.stop();
  await collector?.stop();
  await worker?.stop();
  await q?.cleanup();
  await db?.drop();
});

/** Rates over a window that holds the test's traffic however slow the box (Grafana: `$__rate_interval`). */
const JOBS: readonly string[] = JOB_NAMES;

/** What each dashboard query and recorded measure answers in tier 4, after the traffic below. */
function expected(): Record<string, Expectation> {
  const consumers = { label: 'consumer', values: ['error', 'standard'] };
  return {
    'Ingest rate by type/A': {
      labels: ['type'],
      value: positive,
      covers: { label: 'type', values: ['metric', 'error'] },
    },
    // The worker stores what the collector published, by the lane it came through.
    'Stored rate by lane/A': {
      labels: ['lane'],
      value: positive,
      covers: { label: 'lane', values: ['error', 'standard'] },
    },
    'Stored rate by lane/B': { labels: [], value: nonNegative, count: 1 },
    '429s by reason/A': 'none',
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
    'Lane depth/A': 'none',
    'Lane depth/B': 'none',
    'Flush latency/A': { labels: [], value: between(0, 5), count: 1 },
    'Flush latency/B': { labels: [], value: between(0, 5), count: 1 },
    'Flush latency/C': { labels: [], value: oneOf(0), count: 1 },
    'Scheduler runs/A': {
      labels: ['job_name', 'result'],
      value: nonNegative,
      covers: { label: 'job_name', values: JOBS },
    },
    'Rate limiter fallback/A': { labels: ['instance'], value: oneOf(0), count: 1 },
    'HAProxy responses and retries/A': 'none',
    'HAProxy responses and retries/B': 'none',
    'HAProxy responses and retries/C': 'none',
    'Collectors in service/A': 'none',
    'Collectors in service/B': { labels: [], value: oneOf(1), count: 1 },
    // One writer, the worker, and it can write; the ingest collector writes nothing.
    'Collectors in service/C': { labels: [], value: oneOf(1), count: 1 },
    'Collectors in service/D': { labels: [], value: oneOf(0), count: 1 },
    'Collectors in service/E': { labels: [], value: oneOf(1), count: 1 },
    'Stream backlog and its limit/A': { labels: [], value: nonNegative, count: 1 },
    'Stream backlog and its limit/B': { labels: [], value: positive, count: 1 },
    'Consumer lag and messages in flight/A': { labels: ['consumer'], value: nonNegative, covers: consumers },
    'Consumer lag and messages in flight/B': { labels: ['consumer'], value: nonNegative, covers: consumers },
    'Publish latency/A': { labels: [], value: between(0, 5), count: 1 },
    'Publish latency/B': { labels: [], value: between(0, 5), count: 1 },
    'Publishes refused, by reason/A': 'none',
    'Stream replicas and leader moves/A': { labels: [], value: oneOf(1), count: 1 },
    'Stream replicas and leader moves/B': { labels: [], value: oneOf(1), count: 1 },
    'Stream replicas and leader moves/C': { labels: [], value: nonNegative, count: 1 },
    'Requests per published message/A': { labels: [], value: between(1, 256), count: 1 },
    'Requests per published message/B': { labels: [], value: between(1, 256), count: 1 },
    'Requests per published message/C': { labels: [], value: between(1, 256), count: 1 },
    'Events given up on/A': 'none',
    'Read standby lag/A': 'none',
    'Read standby lag/B': 'none',
    // Preset at 0: the first dead letter is an increase.
    'Events given up on/B': {
      labels: ['reason'],
      value: oneOf(0),
      covers: { label: 'reason', values: ['unparseable', 'storage_rejected', 'max_deliveries'] },
      count: 3,
    },
    // The rules' measures.
    'sluice:lane_fill:ratio': 'none',
    'sluice:stream_fill:ratio': { labels: ['__name__'], value: between(0, 1), count: 1 },
    'sluice:events_throttled:share5m': 'none',
    'sluice:scheduler_intervals_since_success': {
      labels: ['__name__', 'job_name'],
      value: between(0, 3),
      covers: { label: 'job_name', values: JOBS },
      count: JOBS.length,
    },
  };
}

/** Events taken, an invalid event and a bad request. */
async function sendTraffic(sent: { metric: number; error: number }): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const answer = await postEvents(collector.url, [metric('prom'), metric('prom'), errorEvent('prom')]);
    expect(answer.status).toBe(202);
    sent.metric += 2;
    sent.error += 1;
  }
  expect(
    (await postEvents(collector.url, [metric('prom', { id: 'not-a-uuid' })])).body.rejected,
  ).toHaveLength(1);
  expect((await postEvents(collector.url, null, { raw: '{"events": [' })).status).toBe(400);
}

describe('Prometheus scraping an ingest collector and a worker (tier 4)', () => {
  it('every dashboard query and rule answers what its panel or alert reads, after traffic', async () => {
    await waitFor(
      'both targets up in Prometheus',
      async () => (await prometheus.query('up')).filter((s) => s.value === 1).length === 2,
      20_000,
    );
    // Two rounds, each scraped before the next: a labelled counter's series appears at its first
    // increment, so only the second round is an increase Prometheus can see (a rate above 0).
    const sent = { metric: 0, error: 0 };
    for (let round = 0; round < 2; round++) {
      await sendTraffic(sent);
      await waitFor(
        'the worker to have stored, and Prometheus scraped, every event taken',
        async () => {
          const stored = await prometheus.query('sum(sluice_events_stored_total{job="sluice-worker"})');
          const taken = await prometheus.query('sum(sluice_events_accepted_total{job="sluice"})');
          const total = sent.metric + sent.error;
          return stored[0]?.value === total && taken[0]?.value === total;
        },
        20_000,
      );
    }

    // sluice_storage_up comes from the worker alone, and says it can write.
    const storageUp = await prometheus.query('sluice_storage_up');
    expect(storageUp.map((s) => [s.metric.job, s.value])).toEqual([['sluice-worker', 1]]);
    expect(await renamedLabelSeries(prometheus)).toEqual([]);

    const rules = await prometheus.rules();
    expect(await checkQueries(prometheus, panelAndRuleQueries(rules), expected(), 15_000)).toEqual([]);

    // Every alert evaluates without error and reads metrics these processes export (but a read
    // standby's: none here); none is active.
    const names = await prometheus.metricNames();
    for (const a of rules.filter((r) => r.type === 'alerting')) {
      const reads = alertReads(a, names);
      const standbyOnly = a.name === 'SluiceReadStandbyBehind';
      expect(reads).toEqual({
        alert: a.name,
        health: 'ok',
        error: '',
        unknown: standbyOnly ? reads.unknown : [],
      });
      expect({ alert: a.name, state: a.state }).toEqual({ alert: a.name, state: 'inactive' });
    }
  }, 90_000);
});
