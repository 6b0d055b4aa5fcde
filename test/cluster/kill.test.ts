import { detectionWindowMs } from '../../src/dev-cluster/check-timing';
import { describeReport, IngestLoad } from './support/ingest-load';
import { idsNotStoredOnce } from '../support/pg-client';
import { SCHEDULING_SLACK_MS, startTestCluster, type TestCluster } from './support/test-cluster';

let t: TestCluster;

beforeAll(async () => {
  // stored: a 202 means committed, so whatever the killed collector acknowledged is in PostgreSQL.
  t = await startTestCluster('kill', { env: { SLUICE_ACK: 'stored' } });
}, 90_000);

afterAll(async () => {
  await t?.close();
});

describe('kill -9 of one collector under load', () => {
  it('is marked down within the check window, and every acknowledged event is stored exactly once', async () => {
    const { cluster } = t;
    const load = new IngestLoad({
      url: cluster.url,
      workers: 8,
      batchSize: 25,
      pauseMs: 5,
      // An SDK: resends a batch that got no 202, same ids and ts.
      maxAttempts: 20,
      retryDelayMs: 100,
      maxRequests: 5000,
      maxMs: 40_000,
      app: 'kill-test',
    });
    try {
      await load.waitForMoreAcks(60);
      const victim = cluster.collectors[1]!;
      const killed = victim.kill();
      const downAfterMs = await cluster.waitForServer(victim.name, 'DOWN', 10_000);
      expect((await killed).signal).toBe('SIGKILL');
      // A refused check fails at once: DOWN within inter + (fall - 1) x fastinter + timeout check.
      expect(downAfterMs).toBeLessThanOrEqual(detectionWindowMs(cluster.timing) + SCHEDULING_SLACK_MS);
      // The two survivors carry the load on.
      await load.waitForMoreAcks(60);
      const stats = await cluster.servers();
      process.stdout.write(
        `kill -9: DOWN after ${downAfterMs} ms; HAProxy retries ${stats.map((s) => `${s.name}=${s.retries}/${s.redispatches}`).join(' ')}\n`,
      );
    } finally {
      const report = await load.stop();
      const ids = report.ackedIds;
      expect({ abandoned: report.abandonedBatches, report: describeReport(report) }).toEqual({
        abandoned: 0,
        report: expect.any(String),
      });
      expect(ids.length).toBeGreaterThanOrEqual(120 * 25);
      expect(new Set(ids).size).toBe(ids.length);
      // Exactly once: none missing (acknowledged then lost) and none twice (a retry stored again).
      expect(await idsNotStoredOnce(t.db.url, ids)).toEqual([]);
      process.stdout.write(`kill -9: ${describeReport(report)}\n`);
    }
  }, 90_000);
});
