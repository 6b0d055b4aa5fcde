import pg from 'pg';
import { lossMapOf, lossMapsByMinute } from '../../src/loss-map/loss-map';
import { READ_PAGE_ROWS } from '../../src/storage/layout/read-runner';
import type { PostgresStorage } from '../../src/storage/postgres';
import type { ErrorMessageRow } from '../../src/storage/port';
import { StorageBusyError } from '../../src/storage/storage-busy';
import { StorageUnavailableError } from '../../src/storage/storage-unavailable';
import { waitFor } from '../support/http';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { openPostgresStorage, writeEvents } from '../support/storage';
import { telemetryEvent } from '../support/telemetry-events';

/*
 * Paged reads on PostgreSQL (storage/postgres/read-cursor.ts): the error scan and the loss map
 * come a cursor page at a time. They hand on the rows a whole read gives, in its order; a read
 * that fails after its first page (its consumer throws, it runs past the read timeout, its
 * connection dies) rejects as a whole read would, and leaves no transaction open behind it.
 */

const MIN = 60_000;
const NOW = Date.UTC(2026, 11, 6, 10, 30, 20);
/** Errors and loss-map minutes enough for three pages and a part. */
const ROWS = 3 * READ_PAGE_ROWS + 17;
const READ_TIMEOUT_MS = 1500;

let db: TestDatabase;
let admin: pg.Client;
let storage: PostgresStorage;

beforeAll(async () => {
  db = await createTestDatabase('read_pages');
  storage = openPostgresStorage(db.url, {
    clock: { now: () => NOW },
    readTimeoutMs: READ_TIMEOUT_MS,
    readPoolSize: 1,
  });
  await storage.migrate();
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  // Errors with a message each, so the scan aggregates them into one row each.
  const errors = Array.from({ length: ROWS }, (_, i) =>
    telemetryEvent(
      'error',
      {
        app: 'paged',
        ts: NOW - 3_600_000 + i,
        error: { message: `order ${i} not found`, kind: 'E', stack: null },
      },
      NOW,
    ),
  );
  await writeEvents(storage, errors);
  // One loss-map row per minute of the app, ROWS minutes.
  await admin.query(
    `INSERT INTO event_outcomes (app, minute, type, outcome, reason, origin, count)
     SELECT 'paged-map', $1::bigint + g * ${MIN}, 'log', 'captured', '', 'sdk', g + 1 FROM generate_series(0, $2::int - 1) g`,
    [NOW - 30 * 86_400_000, ROWS],
  );
});

afterAll(async () => {
  await admin?.end();
  await storage?.close();
  await db?.drop();
});

const errorScan = { app: 'paged', from: NOW - 2 * 3_600_000, to: NOW + 1, scanLimit: 20_000 };
const outcomeQuery = { app: 'paged-map', from: NOW - 31 * 86_400_000, to: NOW };

/**
 * Waits until no read backend of this database is inside a transaction: a failed paged read's
 * connection is closed (the server then rolls its transaction back), which the server sees a
 * moment after the read has failed.
 */
async function noOpenTransaction(): Promise<void> {
  await waitFor('no read transaction left open', async () => {
    const { rows } = await admin.query<{ n: string }>(
      `SELECT count(*) AS n FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'sluice:read'
          AND state LIKE 'idle in transaction%'`,
    );
    return Number(rows[0]?.n) === 0;
  });
}

it('hands on the rows of a whole read, in order, a page at a time', async () => {
  const whole = await storage.scanErrors(errorScan);
  expect(whole.rows).toHaveLength(ROWS);
  const pages: ErrorMessageRow[][] = [];
  const paged = await storage.scanErrors(errorScan, (rows) => void pages.push([...rows]));
  expect(paged.rows).toEqual([]);
  expect(paged.boundTs).toBe(whole.boundTs);
  expect(pages.map((p) => p.length)).toEqual([READ_PAGE_ROWS, READ_PAGE_ROWS, READ_PAGE_ROWS, 17]);
  expect(pages.flat()).toEqual(whole.rows);

  const minutes = await storage.queryOutcomes(outcomeQuery);
  expect(minutes).toHaveLength(ROWS);
  const outcomePages: number[] = [];
  const handed: typeof minutes = [];
  expect(
    await storage.queryOutcomes(outcomeQuery, (rows) => {
      outcomePages.push(rows.length);
      handed.push(...rows);
    }),
  ).toEqual([]);
  expect(outcomePages).toEqual([READ_PAGE_ROWS, READ_PAGE_ROWS, READ_PAGE_ROWS, 17]);
  expect(handed).toEqual(minutes);
});

it('asks for the next page only once the consumer is done with the last one', async () => {
  let busy = false;
  let overlapped = false;
  await storage.queryOutcomes(outcomeQuery, async () => {
    overlapped ||= busy;
    busy = true;
    await new Promise((resolve) => setTimeout(resolve, 20));
    busy = false;
  });
  expect(overlapped).toBe(false);
});

it('a consumer failing after the first page fails the read with its own error, and the pool reads on', async () => {
  const failure = new Error('the answer could not be built');
  let pages = 0;
  await expect(
    storage.queryOutcomes(outcomeQuery, () => {
      if (++pages === 2) throw failure;
    }),
  ).rejects.toBe(failure);
  expect(pages).toBe(2);
  await noOpenTransaction();
  expect(await storage.queryOutcomes(outcomeQuery)).toHaveLength(ROWS);
});

it('the read timeout bounds the whole read, every page: past it the read fails busy (timeout)', async () => {
  const started = performance.now();
  let pages = 0;
  const read = storage.scanErrors(errorScan, async () => {
    pages++;
    await new Promise((resolve) => setTimeout(resolve, READ_TIMEOUT_MS / 2));
  });
  const err: unknown = await read.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StorageBusyError);
  expect((err as StorageBusyError).reason).toBe('timeout');
  // Two pages fit in the timeout, the third not: the read stopped there, not after every page.
  expect(pages).toBeLessThan(4);
  expect(performance.now() - started).toBeLessThan(READ_TIMEOUT_MS * 3);
  await noOpenTransaction();
  expect((await storage.scanErrors(errorScan)).rows).toHaveLength(ROWS);
});

it('a connection that dies between pages fails the read as storage unavailable, and the next read reconnects', async () => {
  let pages = 0;
  const read = storage.queryOutcomes(outcomeQuery, async () => {
    if (++pages !== 1) return;
    await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'sluice:read'`,
    );
    await waitFor('the read backend gone', async () => {
      const { rows } = await admin.query<{ n: string }>(
        `SELECT count(*) AS n FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = 'sluice:read'`,
      );
      return Number(rows[0]?.n) === 0;
    });
  });
  await expect(read).rejects.toBeInstanceOf(StorageUnavailableError);
  expect(pages).toBe(1);
  expect(await storage.queryOutcomes(outcomeQuery)).toHaveLength(ROWS);
});

it('the loss map read summed over types has the loss map of the read by type, in fewer rows', async () => {
  const minute = NOW - 10 * MIN;
  await admin.query(
    `INSERT INTO event_outcomes (app, minute, type, outcome, reason, origin, count)
     SELECT 'typed', $1::bigint + (g % 3) * ${MIN}, t, o, CASE WHEN o = 'sdk_dropped' THEN 'buffer_full' ELSE '' END, 'sdk', g
       FROM generate_series(1, 12) g, unnest(ARRAY['log', 'error', 'metric']) t,
            unnest(ARRAY['captured', 'sdk_delivered', 'sdk_dropped', 'stored']) o`,
    [minute],
  );
  const q = { app: 'typed', from: minute, to: minute + 3 * MIN };
  const byType = await storage.queryOutcomes(q);
  const allTypes = await storage.queryOutcomes({ ...q, byType: false });
  expect(allTypes).toHaveLength(byType.length / 3);
  expect(allTypes.every((r) => r.type === '')).toBe(true);
  const horizon = { now: NOW, horizonMs: 0 };
  expect(lossMapOf(allTypes, horizon)).toEqual(lossMapOf(byType, horizon));
  expect(lossMapsByMinute(allTypes, horizon)).toEqual(lossMapsByMinute(byType, horizon));
});
