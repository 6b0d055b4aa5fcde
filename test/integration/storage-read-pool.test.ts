import pg from 'pg';
import { metric } from '../support/events';
import { getJson, postEvents, waitFor } from '../support/http';
import { startInProcess, type InProcessCollector } from '../support/in-process';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/**
 * No read can hold back the writer (PostgreSQL, the defaults a user gets, `SLUICE_ACK=stored`).
 * Reads are made slow for certain by a session holding an exclusive lock on the 1m rollup table,
 * which only `GET /v1/metrics?resolution=1m` reads: each such read blocks until its statement
 * timeout, as a read scanning a large table would.
 */

const CONCURRENT_READS = 24;
const WRITES = 40;
const EVENTS_PER_WRITE = 50;

let db: TestDatabase;
let c: InProcessCollector;
let admin: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase('read_pool');
  c = await startInProcess({ SLUICE_DATABASE_URL: db.url, SLUICE_ACK: 'stored' });
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
});

afterAll(async () => {
  await admin?.end();
  await c?.stop();
  await db?.drop();
});

function p99(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)] as number;
}

it('during 24 concurrent slow reads, stored writes commit with p99 under 1 s, /readyz stays 200, and reads past the pool fail fast with 503 storage_busy', async () => {
  const blocker = new pg.Client({ connectionString: db.url });
  await blocker.connect();
  try {
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE metric_rollups_1m IN ACCESS EXCLUSIVE MODE');

    const started = performance.now();
    const reads = Array.from({ length: CONCURRENT_READS }, async () => {
      const res = await fetch(`${c.url}/v1/metrics?name=render.frame_drop&resolution=1m`);
      return {
        status: res.status,
        ms: performance.now() - started,
        retryAfter: res.headers.get('retry-after'),
        body: (await res.json()) as { error?: string },
      };
    });
    // Every read connection is taken by a read waiting on the lock.
    await waitFor('reads blocked on the lock', async () => {
      const { rows } = await admin.query<{ n: string }>(
        `SELECT count(*) AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%metric_rollups_1m%'`,
      );
      return Number(rows[0]?.n) >= 1;
    });

    const latencies: number[] = [];
    const ids: string[] = [];
    for (let i = 0; i < WRITES; i++) {
      const events = Array.from({ length: EVENTS_PER_WRITE }, () => metric('read-pool'));
      ids.push(...events.map((e) => e.id as string));
      const t = performance.now();
      const answer = await postEvents(c.url, events);
      latencies.push(performance.now() - t);
      expect(answer.status).toBe(202);
      expect((await fetch(`${c.url}/readyz`)).status).toBe(200);
    }
    expect(p99(latencies)).toBeLessThan(1000);

    const answers = await Promise.all(reads);
    // Never a hang: every read is answered, the ones that found no connection within the wait at once.
    for (const a of answers) {
      expect(a).toMatchObject({ status: 503, retryAfter: '1', body: { error: 'storage_busy' } });
    }
    const fast = answers.filter((a) => a.ms < 2000);
    expect(fast.length).toBeGreaterThanOrEqual(CONCURRENT_READS - 4);
    expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(5000 + 2000);

    // Stored exactly once, each of them.
    const { rows } = await admin.query<{ id: string; n: string }>(
      'SELECT id::text AS id, count(*) AS n FROM metric_samples WHERE id = ANY ($1::uuid[]) GROUP BY id',
      [ids],
    );
    expect(rows).toHaveLength(ids.length);
    expect(rows.every((r) => r.n === '1')).toBe(true);
  } finally {
    await blocker.query('ROLLBACK').catch(() => undefined);
    await blocker.end();
  }
  // The lock gone, reads are served again.
  const after = await getJson(`${c.url}/v1/metrics?name=render.frame_drop&resolution=1m`);
  expect(after.status).toBe(200);
});
