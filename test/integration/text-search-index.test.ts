import pg from 'pg';
import type { PostgresStorage } from '../../src/storage/postgres';
import type { EventQuery } from '../../src/storage/port';
import { queryEventsWith } from '../../src/storage/layout/events-sql';
import { PG_EVENTS_DIALECT } from '../../src/storage/postgres/query-events';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { openPostgresStorage } from '../support/storage';

/*
 * `GET /v1/events?text=` on PostgreSQL goes through the trigram index of migration 11: a rare text
 * over a window of many rows is one index read, not a walk of the window newest first.
 */

const DAY_MS = 86_400_000;
const NOW = Date.now();
/** Rows of the one app over the last day; a few of them hold the searched text. */
const ROWS = 150_000;
const NEEDLE_EVERY = 30_000;

let db: TestDatabase;
let admin: pg.Client;
let storage: PostgresStorage;

beforeAll(async () => {
  db = await createTestDatabase('text_search_index');
  storage = openPostgresStorage(db.url, { clock: { now: () => NOW } });
  await storage.migrate();
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  // Spread over the last day, newest at i = 1; every NEEDLE_EVERY-th log says "needle phrase".
  await admin.query(
    `INSERT INTO events (id, ts, type, app, name, message, attributes)
     SELECT gen_random_uuid(), $1::bigint - i * ($2::bigint / $3::bigint), 'log', 'shop', 'checkout.step',
            CASE WHEN i % $4 = 0 THEN 'found the needle phrase in order ' || i
                 ELSE 'request ' || md5(i::text) || ' served for user ' || (i % 997) END,
            '{}'::jsonb
       FROM generate_series(1, $3::int) i`,
    [NOW, DAY_MS, ROWS, NEEDLE_EVERY],
  );
  await admin.query('ANALYZE events');
  // At this size a sequential scan costs the planner less than any index: leave it out, so the
  // plans show which index each statement can use.
  await admin.query('SET enable_seqscan = off');
}, 60_000);

afterAll(async () => {
  await admin?.end();
  await storage?.close();
  await db?.drop();
});

const query = (over: Partial<EventQuery>): EventQuery => ({
  app: 'shop',
  type: 'log',
  from: NOW - DAY_MS,
  to: NOW + 1,
  limit: 100,
  scanLimit: 10_000,
  ...over,
});

/** The plans (EXPLAIN, JSON) of every statement `queryEvents` runs for `q`. */
async function plans(q: EventQuery): Promise<string[]> {
  const explained: string[] = [];
  await queryEventsWith(
    {
      async rows<Row>(build: (param: (v: unknown) => string) => string): Promise<Row[]> {
        const values: unknown[] = [];
        const text = build((v) => `$${values.push(v)}`);
        const r = await admin.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${text}`, values);
        explained.push(JSON.stringify(r.rows[0]?.['QUERY PLAN']));
        return [];
      },
    },
    q,
    PG_EVENTS_DIALECT,
  );
  return explained;
}

describe('text search on PostgreSQL', () => {
  it('creates pg_trgm and a trigram index over the messages of events', async () => {
    const r = await admin.query<{ extname: string }>(
      `SELECT extname FROM pg_extension WHERE extname = 'pg_trgm'`,
    );
    expect(r.rows).toHaveLength(1);
    const idx = await admin.query<{ def: string }>(
      `SELECT pg_get_indexdef('events_text_trgm'::regclass) AS def`,
    );
    expect(idx.rows[0]?.def).toMatch(/USING gin \(message gin_trgm_ops, error_message gin_trgm_ops\)/);
  });

  it('reads a text filter through the trigram index', async () => {
    // The scan bound (the type is checked row by row) and the page both carry the text.
    const explained = await plans(query({ text: 'needle phrase' }));
    expect(explained).toHaveLength(2);
    for (const plan of explained) {
      expect(plan).toMatch(/"Index Name":"events_[^"]*message_error_message[^"]*"/);
    }
  });

  it('finds every match of a rare text over a day of many rows in one page', async () => {
    const page = await storage.queryEvents(query({ text: 'NEEDLE phrase' }));
    expect(page.events).toHaveLength(ROWS / NEEDLE_EVERY);
    expect(page.next).toBeNull();
    expect(page.events.every((e) => e.message?.includes('needle phrase'))).toBe(true);
  });

  it('keeps the scan bound for a text too short for trigrams', async () => {
    const explained = await plans(query({ text: 'ne' }));
    expect(explained).toHaveLength(2);
    const page = await storage.queryEvents(query({ text: 'ne' }));
    expect(page.next).not.toBeNull();
  });
});
