import pg from 'pg';
import { JOB_NAMES } from '../../src/scheduler/lock-keys';
import { waitFor } from '../support/http';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { createTestQueue, startWorkerProcess, type TestQueue, type WorkerProcess } from './queue-support';

/** Tier 4: the workers are the writers, so they run the scheduled jobs (once per interval cluster-wide). */
describe('sluice worker runs the scheduled jobs', () => {
  let db: TestDatabase;
  let q: TestQueue;
  let worker: WorkerProcess | undefined;

  beforeAll(async () => {
    db = await createTestDatabase('worker_jobs');
    q = await createTestQueue('worker-jobs');
  });
  afterAll(async () => {
    expect(await worker?.stop()).toBe(0);
    await q?.cleanup();
    await db?.drop();
  });

  it('every scheduled job (downsample, purge, partitions, loss-map compaction, metric block merge) runs on the worker', async () => {
    worker = await startWorkerProcess({
      ...q.env,
      SLUICE_DATABASE_URL: db.url,
      SLUICE_JOB_DOWNSAMPLE_INTERVAL_MS: '500',
      SLUICE_JOB_PURGE_INTERVAL_MS: '500',
      SLUICE_JOB_PARTITIONS_INTERVAL_MS: '500',
      SLUICE_JOB_COMPACT_OUTCOMES_INTERVAL_MS: '500',
      SLUICE_JOB_MERGE_METRIC_BLOCKS_INTERVAL_MS: '500',
    });
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    try {
      const jobs = await waitFor(
        'a finished run of each job',
        async () => {
          const { rows } = await admin.query<{ job: string }>(
            `SELECT DISTINCT job FROM scheduler_runs WHERE error IS NULL AND finished_ms IS NOT NULL`,
          );
          const names = rows.map((r) => r.job).sort();
          return names.length === JOB_NAMES.length ? names : null;
        },
        20_000,
      );
      expect(jobs).toEqual([...JOB_NAMES].sort());
    } finally {
      await admin.end();
    }
  });
});
