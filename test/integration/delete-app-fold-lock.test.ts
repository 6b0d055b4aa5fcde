/**
 * `sluice delete` against a downsample fold or a loss-map compaction running at the same moment
 * (PostgreSQL): a fold that read the app's samples before the delete committed would write their
 * rollups back after it, and a compaction that removed the app's loss-map rows would write their
 * sums back. The delete takes both jobs' locks, so it waits for a run in progress and then
 * removes everything.
 */
import pg from 'pg';
import { compactOutcomesJob } from '../../src/scheduler/jobs/compact-outcomes';
import { downsampleJob } from '../../src/scheduler/jobs/downsample';
import { JOB_LOCK_KEYS } from '../../src/scheduler/lock-keys';
import { compactOutcomeMinute } from '../../src/storage/postgres/compact-outcomes';
import { waitFor } from '../support/http';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { openPostgresStorage, writeEvents } from '../support/storage';
import { telemetryEvent } from '../support/telemetry-events';
import { minuteOf } from '../../src/loss-map/outcome';

const JOBS = [
  downsampleJob({ retention1mMs: 86_400_000 }).name,
  compactOutcomesJob({ settleMs: 60_000, maxRowsPerRun: 1, retentionRawMs: 86_400_000 }).name,
];

describe('deleting an app while a job that rewrites its rows holds its lock (postgres)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('delete_fold_lock');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it.each(JOBS)('waits for %s to end, then deletes every row of the app', async (job) => {
    const storage = openPostgresStorage(db.url);
    const fold = new pg.Client({ connectionString: db.url, application_name: 'test-fold' });
    await fold.connect();
    try {
      await storage.migrate();
      const events = [
        telemetryEvent('metric', { app: 'gone', name: 'm', value: 1 }),
        telemetryEvent('log', { app: 'gone', message: 'x' }),
      ];
      await writeEvents(storage, events);
      // Their intake's counts, as a collector's recorder writes them: nothing is pending.
      await storage.writeOutcomes({
        counts: events.map((e) => ({
          app: 'gone',
          minute: minuteOf(e.ts),
          type: e.type,
          outcome: 'accepted' as const,
          reason: '',
          origin: 'direct' as const,
          count: 1,
        })),
        reports: [],
        now: Date.now(),
      });
      // The lock the scheduler takes for the job it runs under this name.
      expect(job === 'downsample' || job === 'compact_outcomes').toBe(true);
      await fold.query('BEGIN');
      await fold.query('SELECT pg_advisory_xact_lock($1::bigint)', [
        JOB_LOCK_KEYS[job as 'downsample' | 'compact_outcomes'].toString(),
      ]);
      if (job === 'compact_outcomes') {
        // The compaction has folded the app's loss-map rows (stored and accepted, per event):
        // removed, and their sums written anew.
        const folded = await compactOutcomeMinute(fold, 0, Date.now() + 3_600_000);
        expect(folded).toMatchObject({ folded: 4, written: 4 });
      }

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
      const { rows } = await fold.query(`SELECT count(*)::int AS n FROM event_outcomes WHERE app = 'gone'`);
      expect(rows[0].n).toBe(0);
    } finally {
      await fold.end();
      await storage.close();
    }
  });
});
