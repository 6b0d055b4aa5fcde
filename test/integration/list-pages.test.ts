import { log, metric } from '../support/events';
import { getJson, postEvents, waitFor } from '../support/http';
import { startInProcess, type InProcessCollector } from '../support/in-process';
import { createTestDatabase, tempSqlitePath, type TestDatabase } from '../support/postgres';

/**
 * `GET /v1/apps` and `GET /v1/metrics/names` are paged (a cursor, a prefix search, a clear signal
 * when a list is cut) on both storages, with the defaults a user gets: every name is on exactly
 * one page, in order, and a summary series stored as `<name>_summary` is listed once under
 * `<name>`, whichever page each lands on.
 */
describe.each(['sqlite', 'postgres'] as const)('pages of names (%s)', (kind) => {
  let db: TestDatabase | null = null;
  let c: InProcessCollector;
  const eventApps = Array.from({ length: 30 }, (_, i) => `pg-app-${String(i).padStart(2, '0')}`);
  const metricApps = Array.from({ length: 10 }, (_, i) => `pg-met-${String(i).padStart(2, '0')}`);
  const names = Array.from({ length: 12 }, (_, i) => `n.${String(i).padStart(2, '0')}`);

  beforeAll(async () => {
    db = kind === 'postgres' ? await createTestDatabase('list_pages') : null;
    c = await startInProcess(
      db ? { SLUICE_DATABASE_URL: db.url } : { SLUICE_SQLITE_PATH: tempSqlitePath('list_pages') },
      { defaults: 'user' },
    );
    // One request per app, as SDKs send.
    for (const a of eventApps) expect((await postEvents(c.url, [log(a)])).status).toBe(202);
    for (const a of metricApps)
      expect((await postEvents(c.url, [metric(a, { name: 'shared.depth' })])).status).toBe(202);
    const own = names.map((name) => metric('pg-names', { name }));
    const summary = metric('pg-names', {
      name: 'n.05_summary',
      value: undefined,
      summary: { count: 2, min: 1, max: 3, sum: 4, avg: 2 },
    });
    expect((await postEvents(c.url, [...own, summary])).status).toBe(202);
  });

  afterAll(async () => {
    await c?.stop();
    await db?.drop();
  });

  /** Every page of `path` (which has a query string), following `next_cursor`; at most 50 pages. */
  async function pages(
    path: string,
    rows: 'apps' | 'names',
  ): Promise<Array<{ items: any[]; next: string | null }>> {
    const out: Array<{ items: any[]; next: string | null }> = [];
    let cursor: string | null = null;
    do {
      const r = await getJson(`${c.url}${path}${cursor === null ? '' : `&cursor=${cursor}`}`);
      expect(r.status).toBe(200);
      out.push({ items: r.body[rows], next: r.body.next_cursor });
      cursor = r.body.next_cursor;
    } while (cursor !== null && out.length < 50);
    return out;
  }

  it('pages GET /v1/apps with a cursor: every app once, in order, each full page saying more may follow', async () => {
    const all = [...eventApps, ...metricApps, 'pg-names'].sort();
    await waitFor(
      'every app listed',
      async () => (await getJson(`${c.url}/v1/apps?limit=1000`)).body.apps.length === all.length,
    );
    const got = await pages('/v1/apps?limit=7', 'apps');
    expect(got.flatMap((p) => p.items.map((a) => a.app))).toEqual(all);
    for (const p of got.slice(0, -1)) {
      expect(p.items).toHaveLength(7);
      expect(p.next).not.toBeNull();
    }
    expect(got[got.length - 1]?.next).toBeNull();
    // A metric-only app is listed with its minute (from the invalidation log, or the rollups once folded).
    const met = got.flatMap((p) => p.items).find((a) => a.app === 'pg-met-03');
    expect(met.last_metric_minute).toEqual(expect.any(Number));
  });

  it('searches GET /v1/apps by prefix, paged too', async () => {
    const tens = eventApps.filter((a) => a.startsWith('pg-app-1'));
    const one = await getJson(`${c.url}/v1/apps?prefix=pg-app-1`);
    expect(one.body.apps.map((a: any) => a.app)).toEqual(tens);
    expect(one.body.next_cursor).toBeNull();
    const got = await pages('/v1/apps?prefix=pg-app-1&limit=4', 'apps');
    expect(got.map((p) => p.items.map((a) => a.app))).toEqual([
      tens.slice(0, 4),
      tens.slice(4, 8),
      tens.slice(8),
    ]);
    expect((await getJson(`${c.url}/v1/apps?prefix=pg-zzz`)).body).toMatchObject({
      apps: [],
      next_cursor: null,
    });
  });

  it('pages the metric names of an app, listing <name>_summary once under <name> across a page boundary', async () => {
    await waitFor('every name listed', async () => {
      const r = await getJson(`${c.url}/v1/metrics/names?app=pg-names&limit=1000`);
      return r.body.names.length === names.length && r.body.names[5].kinds.length === 2;
    });
    // Six names a page: n.05 ends the first page, its summaries (n.05_summary) begin the second.
    const got = await pages('/v1/metrics/names?app=pg-names&limit=6', 'names');
    const listed = got.flatMap((p) => p.items);
    expect(listed.map((n) => n.name)).toEqual(names);
    expect(listed[5]).toEqual({
      name: 'n.05',
      kinds: ['sample', 'summary'],
      apps: ['pg-names'],
      apps_capped: false,
    });
    expect(got[0]?.next).not.toBeNull();
  });

  it('searches metric names of every app by prefix, with their apps', async () => {
    const r = await getJson(`${c.url}/v1/metrics/names?prefix=shared.`);
    expect(r.body.names).toEqual([
      { name: 'shared.depth', kinds: ['sample'], apps: metricApps, apps_capped: false },
    ]);
    expect(r.body.next_cursor).toBeNull();
  });

  it('refuses a cursor it did not make', async () => {
    for (const path of ['/v1/apps?cursor=bm9wZQ', '/v1/metrics/names?cursor=x']) {
      const r = await getJson(`${c.url}${path}`);
      expect(r.status).toBe(400);
      expect(r.body.message).toContain('"cursor"');
    }
  });
});
