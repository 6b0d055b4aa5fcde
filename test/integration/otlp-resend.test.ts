import pg from 'pg';
import { waitFor } from '../support/http';
import { createTestDatabase } from '../support/postgres';
import {
  bySeq,
  otlpRequestCount,
  runOtelClient,
  startWithOtlp,
  storedEvents,
  uniqueApp,
} from './otlp-support';

/**
 * The resend an OpenTelemetry exporter really makes when its answer is lost: with
 * `SLUICE_ACK=stored` and the write held up past `SLUICE_ACK_TIMEOUT_MS`, the collector answers 503
 * while the events are still queued; the real exporter retries the same request (503 is
 * retryable), so the same records are queued twice. Once the write goes through, each record is
 * stored once (its id derives from its content, and `(ts, id)` is unique).
 */
it('an OTLP exporter’s retry after 503 (ack timeout, events still queued) stores each record once', async () => {
  const db = await createTestDatabase('otlp_resend');
  const { c, otlpUrl } = await startWithOtlp({
    SLUICE_DATABASE_URL: db.url,
    SLUICE_ACK: 'stored',
    SLUICE_ACK_TIMEOUT_MS: '1000',
  });
  const blocker = new pg.Client({ connectionString: db.url });
  await blocker.connect();
  try {
    const app = uniqueApp('resend');
    // Log events go to `events`: holding its lock holds every write of them, not the health check.
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE events IN ACCESS EXCLUSIVE MODE');
    const before = await otlpRequestCount(c.url, '503');
    const client = runOtelClient({
      scenario: 'log-batch',
      count: 5,
      url: otlpUrl,
      app,
      encoding: 'protobuf',
    });
    // Two 503s: the export and its first retry are both queued behind the lock.
    await waitFor(
      'the export and a retry answered 503',
      async () => (await otlpRequestCount(c.url, '503')) >= before + 2,
      20_000,
    );
    await blocker.query('ROLLBACK');

    const run = await client;
    expect(run.exports).toEqual([{ code: 0 }]);
    const events = await waitFor('5 log events', async () => {
      const e = await storedEvents(c.url, app);
      return e.length >= 5 ? e : null;
    });
    const seqs = bySeq(events);
    for (let seq = 0; seq < 5; seq++) expect(seqs.get(seq)).toHaveLength(1);
    const { rows } = await blocker.query<{ n: string }>('SELECT count(*) AS n FROM events WHERE app = $1', [
      app,
    ]);
    expect(Number(rows[0]?.n)).toBe(5);
  } finally {
    await blocker.end();
    await c.stop();
    await db.drop();
  }
});
