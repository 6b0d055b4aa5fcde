import { recoveryWindowMs } from '../../src/dev-cluster/check-timing';
import { waitFor } from '../support/http';
import { describeReport, IngestLoad, type IngestLoadReport } from './support/ingest-load';
import { idsNotStoredOnce } from '../support/pg-client';
import { SCHEDULING_SLACK_MS, startTestCluster, type TestCluster } from './support/test-cluster';

let t: TestCluster;

beforeAll(async () => {
  // queued (the default): the drain itself must flush what was acknowledged.
  t = await startTestCluster('drain');
}, 90_000);

afterAll(async () => {
  await t?.close();
});

/** A client that does not retry: every answer other than 202 is a failed request. */
function startLoad(app: string): IngestLoad {
  return new IngestLoad({
    url: t.cluster.url,
    workers: 6,
    batchSize: 20,
    pauseMs: 5,
    maxAttempts: 1,
    maxRequests: 20_000,
    maxMs: 60_000,
    app,
  });
}

/** Retries plus redispatches HAProxy made so far, over every server. */
async function rescued(): Promise<number> {
  return (await t.cluster.servers()).reduce((n, s) => n + s.retries + s.redispatches, 0);
}

async function expectZeroFailures(report: IngestLoadReport): Promise<void> {
  expect({ failed: report.failedAttempts.length, report: describeReport(report) }).toEqual({
    failed: 0,
    report: expect.any(String),
  });
  // Everything acknowledged reached PostgreSQL, once (drained collectors flushed before exiting).
  await waitFor(
    'every acknowledged event to be stored',
    async () => (await idsNotStoredOnce(t.db.url, report.ackedIds)).length === 0,
    20_000,
  );
}

describe('draining collectors under load', () => {
  it('SIGTERM of one collector: zero failed requests', async () => {
    const { cluster } = t;
    const load = startLoad('sigterm-test');
    let report: IngestLoadReport;
    const victim = cluster.collectors[0]!;
    const rescuedBefore = await rescued();
    try {
      await load.waitForMoreAcks(60);
      const sigtermAt = Date.now();
      const exited = victim.stop();
      const downAfterMs = await cluster.waitForServer(victim.name, 'DOWN', 10_000);
      // HAProxy must see the drain before the listener closes: that is what the drain delay is for.
      expect(downAfterMs).toBeLessThan(cluster.drainDelayMs);
      expect(await exited).toEqual({ code: 0, signal: null });
      expect(Date.now() - sigtermAt).toBeGreaterThanOrEqual(cluster.drainDelayMs);
      await load.waitForMoreAcks(60);
    } finally {
      report = await load.stop();
    }
    await expectZeroFailures(report);
    expect(Object.keys(report.servedBy).sort()).toEqual(['collector1', 'collector2', 'collector3']);
    // The drain alone did it: HAProxy never had to replay a request on another collector.
    expect(await rescued()).toBe(rescuedBefore);

    await victim.start();
    await cluster.waitForServer(
      victim.name,
      'UP',
      recoveryWindowMs(cluster.timing) + SCHEDULING_SLACK_MS * 5,
    );
  }, 90_000);

  it('rolling restart of all three: zero failed requests', async () => {
    const { cluster } = t;
    const load = startLoad('rolling-test');
    let report: IngestLoadReport;
    const pids = cluster.collectors.map((c) => c.pid);
    const rescuedBefore = await rescued();
    try {
      await load.waitForMoreAcks(40);
      for (const c of cluster.collectors) {
        expect(await c.restart()).toEqual({ code: 0, signal: null });
        // Only then the next one: never two out of service at once.
        await cluster.waitForServer(c.name, 'UP', recoveryWindowMs(cluster.timing) + SCHEDULING_SLACK_MS * 5);
        await load.waitForMoreAcks(20);
      }
    } finally {
      report = await load.stop();
    }
    await expectZeroFailures(report);
    expect(await rescued()).toBe(rescuedBefore);
    const newPids = cluster.collectors.map((c) => c.pid);
    for (let i = 0; i < pids.length; i++) expect(newPids[i]).not.toBe(pids[i]);
    process.stdout.write(`rolling restart: ${describeReport(report)}\n`);
  }, 120_000);
});
