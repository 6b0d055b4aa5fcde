/**
 * `sluice delete` against a downsample fold running at the same moment (PostgreSQL): a fold that
 * read the app's samples before the delete committed would write their rollups back after it.
 * The delete takes the fold's lock, so it waits for a fold in progress and then removes everything.
 */
import pg from 'pg';
import { downsampleJob } from '../../src/scheduler/jobs/downsample';
import { JOB_LOCK_KEYS } from '../../src/scheduler/lock-keys';
import { waitFor } from '../support/http';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { openPostgresStorage, writeEvents } from '../support/storage';
import { telemetryEvent } from '../support/telemetry-events';

describe('deleting an app while the downsample job holds its lock (postgres)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('delete_fold_lock');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('waits for the fold to end, then deletes every row of the app', async () => {
    const storage = openPostgresStorage(db.url);
    const fold = new pg.Client({ connectionString: db.url, application_name: 'test-fold' });
    await fold.connect();
    try {
      await storage.migrate();
      await writeEvents(storage, [
        telemetryEvent('metric', { app: 'gone', name: 'm', value: 1 }),
        telemetryEvent('log', { app: 'gone', message: 'x' }),
      ]);
      // The lock the scheduler takes for the job it runs under this name.
      const job = downsampleJob({ retention1mMs: 86_400_000 }).name;
      expect(job).toBe('downsample');
      await fold.query('BEGIN');
      await fold.query('SELECT pg_advisory_xact_lock($1::bigint)', [JOB_LOCK_KEYS[job].toString()]);

      let settled = false;
      const deleting = storage.deleteAppData({ app: 'gone', scope: 'all' }).finally(() => (settled = true));
      await waitFor('the delete waiting on the advisory lock', async () => {
        const { rows } = await fold.query(
          `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND NOT l.granted AND a.datname = current_database()`,
        );
        return rows[0].n === 1;
      });
      expect(settled).toBe(false);
      await fold.query('COMMIT');
      const deleted = await deleting;
      expect(deleted.events + deleted.metricSamples).toBe(2);
    } finally {
      await fold.end();
      await storage.close();
    }
  });
});
