import { READ_LIMITS } from '../../src/read/read-limits';
import { errorEvent } from '../support/events';
import { getJson, postEvents } from '../support/http';
import { startInProcess, type InProcessCollector } from '../support/in-process';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/*
 * A page of `GET /v1/events` is bounded in bytes as well as in events: events of the largest size
 * the contract allows (a 16 KiB stack, 32 attributes of 1 KiB) end a page early, its cursor after
 * its last event, so no answer is serialised whole beyond the bound.
 */

const EVENTS = 40;

let db: TestDatabase;
let c: InProcessCollector;

beforeAll(async () => {
  db = await createTestDatabase('read_answer_bound');
  c = await startInProcess({ SLUICE_DATABASE_URL: db.url, SLUICE_ACK: 'stored' });
  const attributes = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`k${i}`, 'v'.repeat(1024)]));
  const events = Array.from({ length: EVENTS }, (_, i) =>
    errorEvent('big', {
      ts: Date.now() - i,
      attributes,
      error: { message: 'm'.repeat(1024), kind: 'Big', stack: 's'.repeat(16_384) },
    }),
  );
  for (let i = 0; i < EVENTS; i += 10) {
    const r = await postEvents(c.url, events.slice(i, i + 10));
    expect(r.status).toBe(202);
  }
});

afterAll(async () => {
  await c?.stop();
  await db?.drop();
});

it('ends a page at the answer bound and continues after its last event', async () => {
  const seen = new Set<string>();
  let cursor: string | null = null;
  let pages = 0;
  do {
    const path: string = `/v1/events?app=big&limit=1000${cursor === null ? '' : `&cursor=${cursor}`}`;
    const res = await fetch(`${c.url}${path}`);
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(READ_LIMITS.maxEventsPageBytes);
    const body = JSON.parse(text) as { events: Array<{ id: string }>; next_cursor: string | null };
    expect(body.events.length).toBeGreaterThan(0);
    for (const e of body.events) {
      expect(seen.has(e.id)).toBe(false);
      seen.add(e.id);
    }
    cursor = body.next_cursor;
    pages++;
  } while (cursor !== null && pages < 100);
  expect(seen.size).toBe(EVENTS);
  expect(pages).toBeGreaterThan(1);
  // Small events still fill a page by count.
  expect((await getJson(`${c.url}/v1/events?app=big&limit=1`)).body.events).toHaveLength(1);
});
