import { createClient } from '../../src/sdk';
import { metric } from '../support/events';
import { getJson, postEvents, waitFor } from '../support/http';
import { startInProcess, type InProcessCollector } from '../support/in-process';
import { createTestDatabase, tempSqlitePath, type TestDatabase } from '../support/postgres';

/**
 * The read API on each storage, through real HTTP, with the settings a user gets (rate limit and
 * shedding on).
 */
describe.each(['sqlite', 'postgres'] as const)('read API (%s)', (kind) => {
  let db: TestDatabase | null = null;
  let c: InProcessCollector;
  const app = `read-${kind}-${process.pid}`;

  beforeAll(async () => {
    db = kind === 'postgres' ? await createTestDatabase('read_api') : null;
    c = await startInProcess(
      db ? { SLUICE_DATABASE_URL: db.url } : { SLUICE_SQLITE_PATH: tempSqlitePath('read_api') },
      { defaults: 'user' },
    );
  });

  afterAll(async () => {
    await c?.stop();
    await db?.drop();
  });

  it('reads a metric back by the name the app wrote, its SDK summaries included', async () => {
    const metricApp = `${app}-sdk`;
    const client = createClient({ endpoint: `${c.url}/v1/events`, app: metricApp });
    for (const v of [1, 5, 3]) client.metric('render.frame_drop', v, { route: '/checkout' });
    await client.close();
    // The wire name stays the design's own.
    const stored = await waitFor('the summary stored', async () => {
      const r = await getJson(`${c.url}/v1/events?app=${metricApp}`);
      return r.body.events.length === 1 ? r.body.events : null;
    });
    expect(stored[0]).toMatchObject({ name: 'render.frame_drop_summary', summary: { count: 3 } });

    const res = await getJson(`${c.url}/v1/metrics?name=render.frame_drop&app=${metricApp}`);
    expect(res.status).toBe(200);
    expect(res.body.points).toEqual([
      expect.objectContaining({ app: metricApp, count: 3, min: 1, max: 5, sum: 9, avg: 3, kind: 'summary' }),
    ]);
  });

  it('pages GET /v1/metrics with a cursor instead of cutting it silently', async () => {
    const pageApp = `${app}-pages`;
    const t = Date.now() - 60_000;
    const samples = Array.from({ length: 7 }, (_, i) =>
      metric(pageApp, { name: 'queue.depth', ts: t + i, value: i }),
    );
    expect((await postEvents(c.url, samples)).status).toBe(202);
    await waitFor('samples stored', async () => {
      const r = await getJson(`${c.url}/v1/events?app=${pageApp}`);
      return r.body.events.length === 7;
    });
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q = new URLSearchParams({ name: 'queue.depth', app: pageApp, limit: '3' });
      if (cursor) q.set('cursor', cursor);
      const res = await getJson(`${c.url}/v1/metrics?${q}`);
      expect(res.status).toBe(200);
      seen.push(...res.body.points.map((p: { sum: number }) => p.sum));
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor !== null && pages < 10);
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(pages).toBe(3);
  });
});
