import Database from 'better-sqlite3';
import pg from 'pg';
import { errorEvent, log, metric } from '../support/events';
import { getJson, postEvents, waitFor } from '../support/http';
import { startInProcess } from '../support/in-process';
import { settledLossMap, type StorageAt } from '../support/loss-map';
import { createTestDatabase, tempSqlitePath, type TestDatabase } from '../support/postgres';

const MINUTE = 60_000;

interface OutcomeRows {
  rows: number;
  keys: number;
  unfolded: number;
}

/** Rows of `app`'s loss map, its distinct keys, and its rows not folded yet, from the database. */
async function outcomeRows(at: StorageAt, app: string): Promise<OutcomeRows> {
  const sql = `SELECT count(*) AS rows,
      (SELECT count(*) FROM (SELECT DISTINCT minute, type, outcome, reason, origin FROM event_outcomes WHERE app = $1) k) AS keys,
      sum(CASE WHEN folded THEN 0 ELSE 1 END) AS unfolded
    FROM event_outcomes WHERE app = $1`;
  if (at.kind === 'sqlite') {
    const db = new Database(at.path, { readonly: true });
    try {
      const r = db.prepare(sql.replaceAll('$1', '@app')).get({ app }) as Record<string, number>;
      return { rows: Number(r.rows), keys: Number(r.keys), unfolded: Number(r.unfolded) };
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: at.url });
  await client.connect();
  try {
    const r = (await client.query(sql, [app])).rows[0];
    return { rows: Number(r.rows), keys: Number(r.keys), unfolded: Number(r.unfolded) };
  } finally {
    await client.end();
  }
}

/**
 * The compaction as a user gets it: a collector's scheduler, the default settle age. What one
 * collector counted (many write transactions, so many rows per key) is read back through
 * `GET /v1/outcomes`; a second collector on the same storage runs the job, and answers the same
 * with one row per key.
 */
describe.each(['sqlite', 'postgres'] as const)(
  'GET /v1/outcomes across a loss-map compaction (%s)',
  (kind) => {
    let db: TestDatabase | null = null;
    let at: StorageAt;

    beforeAll(async () => {
      db = kind === 'postgres' ? await createTestDatabase('loss_map_compact') : null;
      at = db
        ? { kind: 'postgres', url: db.url }
        : { kind: 'sqlite', path: tempSqlitePath('loss_map_compact') };
    });
    afterAll(async () => {
      await db?.drop();
    });

    it('answers the same before and after, with one row per key', async () => {
      const storageEnv: Record<string, string> =
        at.kind === 'postgres' ? { SLUICE_DATABASE_URL: at.url } : { SLUICE_SQLITE_PATH: at.path };
      const app = `compact-${kind}`;
      // Three settled minutes, 6 to 8 minutes ago.
      const first = Math.floor(Date.now() / MINUTE) * MINUTE - 8 * MINUTE;
      const url = (base: string) =>
        `${base}/v1/outcomes?app=${app}&from=${first - MINUTE}&to=${first + 4 * MINUTE}&by=minute`;
      const writer = await startInProcess(
        // ack=stored: each request's rows commit before its answer, each in their own transaction.
        { ...storageEnv, SLUICE_JOB_COMPACT_OUTCOMES_INTERVAL_MS: '0', SLUICE_ACK: 'stored' },
        { defaults: 'user' },
      );
      let answerBefore: unknown;
      try {
        // Twelve requests, each its own write transaction and trigger rows.
        for (let i = 0; i < 12; i++) {
          const ts = first + (i % 3) * MINUTE + i * 1000;
          const events = [
            metric(app, { ts }),
            metric(app, { ts: ts + 1 }),
            log(app, { ts }),
            errorEvent(app, { ts }),
            log(app, { ts, name: '' }),
          ];
          expect((await postEvents(writer.url, events)).status).toBe(202);
        }
        await settledLossMap(writer.url, app, at);
        const r = await getJson(url(writer.url));
        expect(r.status).toBe(200);
        expect(r.body).toMatchObject({ generated: 60, stored: 48, lost: 12 });
        expect((r.body as { minutes: unknown[] }).minutes).toHaveLength(3);
        answerBefore = r.body;
      } finally {
        await writer.stop();
      }

      const before = await outcomeRows(at, app);
      // Each request's transaction wrote a `stored` row per type: 36 rows over 9 keys.
      expect(before.rows).toBeGreaterThanOrEqual(before.keys + 12 * 3 - 9);
      const compactor = await startInProcess(
        { ...storageEnv, SLUICE_JOB_COMPACT_OUTCOMES_INTERVAL_MS: '200' },
        { defaults: 'user' },
      );
      try {
        const after = await waitFor(
          'the compaction of the settled minutes',
          async () => {
            const r = await outcomeRows(at, app);
            return r.unfolded === 0 ? r : null;
          },
          15_000,
        );
        expect(after).toEqual({ rows: before.keys, keys: before.keys, unfolded: 0 });
        expect((await getJson(url(compactor.url))).body).toEqual(answerBefore);
      } finally {
        await compactor.stop();
      }
    });
  },
);
