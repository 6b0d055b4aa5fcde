import { createClient } from '../../sdk/src';
import { errorEvent, log, metric } from '../support/events';
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

  async function events(query: Record<string, string>): Promise<any[]> {
    const res = await getJson(`${c.url}/v1/events?${new URLSearchParams(query)}`);
    expect(res.status).toBe(200);
    return res.body.events;
  }

  it('filters events by env, version, attribute, message text and ISO 8601 times', async () => {
    const fApp = `${app}-filters`;
    const t = Date.now() - 600_000;
    const sent = [
      log(fApp, {
        ts: t,
        source: { app: fApp, env: 'prod', version: '1.0' },
        message: 'Cart saved',
        attributes: { route: '/checkout', status: 200 },
      }),
      log(fApp, {
        ts: t + 1,
        source: { app: fApp, env: 'staging', version: '1.0' },
        message: 'cart lost',
        attributes: { route: '/cart', ok: true },
      }),
      errorEvent(fApp, {
        ts: t + 2,
        source: { app: fApp, env: 'prod', version: '2.0' },
        error: { message: 'Card 100% declined', kind: 'PaymentError' },
        attributes: { route: '/checkout', status: 500 },
      }),
      metric(fApp, {
        ts: t + 3,
        source: { app: fApp, env: 'prod', version: '2.0' },
        attributes: { route: '/checkout' },
      }),
    ];
    expect((await postEvents(c.url, sent)).status).toBe(202);
    await waitFor('filter events stored', async () => (await events({ app: fApp })).length === 4);
    const ids = async (q: Record<string, string>) =>
      (await events({ app: fApp, ...q })).map((e) => e.id).sort();
    const idsOf = (...i: number[]) => i.map((n) => sent[n]?.id as string).sort();

    expect(await ids({ env: 'prod' })).toEqual(idsOf(0, 2, 3));
    expect(await ids({ version: '1.0' })).toEqual(idsOf(0, 1));
    expect(await ids({ env: 'prod', version: '2.0', type: 'metric' })).toEqual(idsOf(3));
    expect(await ids({ 'attr.route': '/checkout' })).toEqual(idsOf(0, 2, 3));
    // Numbers and booleans compare as JSON writes them.
    expect(await ids({ 'attr.status': '500' })).toEqual(idsOf(2));
    expect(await ids({ 'attr.ok': 'true' })).toEqual(idsOf(1));
    expect(await ids({ 'attr.route': '/checkout', 'attr.status': '200' })).toEqual(idsOf(0));
    // Case-insensitive substring of the message or the error message; % and _ are plain text.
    expect(await ids({ text: 'CART' })).toEqual(idsOf(0, 1));
    expect(await ids({ text: '100% dec' })).toEqual(idsOf(2));
    expect(await ids({ text: '1_0' })).toEqual([]);
    const iso = (ms: number) => new Date(ms).toISOString();
    expect(await ids({ from: iso(t + 1), to: iso(t + 3) })).toEqual(idsOf(1, 2));
    expect(await ids({ from: String(t + 1), to: iso(t + 3).replace('Z', '+00:00') })).toEqual(idsOf(1, 2));
  });

  it.each([
    ['/v1/events?attr.=x', 'attr.'],
    // A long name is echoed cut short.
    [`/v1/events?attr.${'k'.repeat(65)}=x`, `attr.${'k'.repeat(40)}`],
    ['/v1/events?attr.a=1&attr.b=1&attr.c=1&attr.d=1&attr.e=1', 'attr.'],
    ['/v1/events?from=2026-02-30', 'from'],
    ['/v1/events?from=2026-01-01T10:00:00', 'from'],
    ['/v1/events?to=yesterday', 'to'],
    ['/v1/events?text=a%00b', 'text'],
    ['/v1/metrics?name=x&cursor=nope', 'cursor'],
    ['/v1/apps?from=2026-01-02&to=2026-01-01', 'from'],
    ['/v1/apps?app=x', 'app'],
    ['/v1/metrics/names?app=%00', 'app'],
    ['/v1/error-groups?type=log', 'type'],
  ])('GET %s → 400 naming %s', async (path, parameter) => {
    const res = await getJson(`${c.url}${path}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_parameter');
    expect(res.body.message).toContain(`"${parameter}`);
  });

  it('lists the apps seen, with last-seen times and event counts', async () => {
    const aApp = `${app}-apps`;
    const mApp = `${app}-apps-metrics`;
    const t = Date.now() - 5000;
    await postEvents(c.url, [
      log(aApp, { ts: t }),
      errorEvent(aApp, { ts: t + 1 }),
      metric(mApp, { ts: t + 2 }),
    ]);
    const listed = await waitFor('both apps listed', async () => {
      const r = await getJson(`${c.url}/v1/apps`);
      const apps = r.body.apps as any[];
      const a = apps.find((x) => x.app === aApp);
      const m = apps.find((x) => x.app === mApp);
      return a && m ? { a, m, body: r.body } : null;
    });
    expect(listed.a).toEqual({
      app: aApp,
      last_seen: t + 1,
      last_event_ts: t + 1,
      last_metric_minute: null,
      events: 2,
      events_capped: false,
      metric_samples: 0,
      metric_samples_capped: false,
    });
    // Metrics are found through the invalidation log to the minute, and counted once rolled up.
    expect(listed.m).toMatchObject({
      app: mApp,
      last_event_ts: null,
      last_metric_minute: t + 2 - ((t + 2) % 60_000),
    });
    expect(listed.body.to - listed.body.from).toBe(24 * 3_600_000);
    const past = await getJson(`${c.url}/v1/apps?from=2020-01-01&to=2020-01-02`);
    expect(past.body.apps).toEqual([]);
  });

  it('lists the metric names of an app by the name written, with their kinds', async () => {
    const nApp = `${app}-names`;
    const client = createClient({ endpoint: `${c.url}/v1/events`, app: nApp });
    client.metric('render.frame_drop', 2);
    await client.close();
    await postEvents(c.url, [
      metric(nApp, { name: 'render.frame_drop' }),
      metric(nApp, { name: 'cpu.load' }),
    ]);
    const names = await waitFor('names listed', async () => {
      const r = await getJson(`${c.url}/v1/metrics/names?app=${nApp}`);
      return r.body.names.length === 2 && r.body.names[1].kinds.length === 2 ? r.body.names : null;
    });
    expect(names).toEqual([
      { name: 'cpu.load', kinds: ['sample'], apps: [nApp], apps_capped: false },
      { name: 'render.frame_drop', kinds: ['sample', 'summary'], apps: [nApp], apps_capped: false },
    ]);
  });

  it('groups errors by kind and message fingerprint, with counts and last seen', async () => {
    const eApp = `${app}-errors`;
    const t = Date.now() - 10_000;
    const sent = [
      errorEvent(eApp, { ts: t, error: { message: 'order 1234 not found', kind: 'NotFound' } }),
      errorEvent(eApp, { ts: t + 5, error: { message: 'order 98 not found', kind: 'NotFound' } }),
      errorEvent(eApp, { ts: t + 3, error: { message: 'order 98 not found', kind: 'Other' } }),
      errorEvent(eApp, { ts: t + 4, error: { message: 'card declined', kind: 'PaymentError' } }),
    ];
    await postEvents(c.url, sent);
    const res = await waitFor('errors grouped', async () => {
      const r = await getJson(`${c.url}/v1/error-groups?app=${eApp}`);
      return r.body.groups?.length === 3 ? r : null;
    });
    expect(res.body.complete).toBe(true);
    expect(
      res.body.groups.map((g: any) => [
        g.kind,
        g.template,
        g.count,
        g.first_seen,
        g.last_seen,
        g.last_id,
        g.message,
      ]),
    ).toEqual([
      ['NotFound', 'order <num> not found', 2, t, t + 5, sent[1]?.id, 'order 98 not found'],
      ['PaymentError', 'card declined', 1, t + 4, t + 4, sent[3]?.id, 'card declined'],
      ['Other', 'order <num> not found', 1, t + 3, t + 3, sent[2]?.id, 'order 98 not found'],
    ]);
    // The newest occurrence opens through the events read: a one-millisecond window.
    const newest = res.body.groups[0];
    const opened = await events({
      type: 'error',
      from: String(newest.last_seen),
      to: String(newest.last_seen + 1),
    });
    expect(opened.map((e) => e.id)).toContain(newest.last_id);
  });

  it('bounds the error groups answer: `limit` groups (default 100) of `total_groups`, 10 apps each of `app_count`', async () => {
    const gApp = `${app}-groups`;
    const t = Date.now() - 10_000;
    // 150 kinds from one app, and one kind from 12 apps.
    // An env of their own keeps the other tests' errors out of these groups.
    const env = `groups${process.pid}`;
    const kinds = Array.from({ length: 150 }, (_, i) =>
      errorEvent(gApp, {
        ts: t + i,
        source: { app: gApp, env },
        error: { message: 'boom', kind: `Kind${i}` },
      }),
    );
    const spread = Array.from({ length: 12 }, (_, i) =>
      errorEvent('', {
        ts: t + 200,
        source: { app: `${gApp}-${i}`, env },
        error: { message: 'spread', kind: 'Spread' },
      }),
    );
    expect((await postEvents(c.url, [...kinds, ...spread])).status).toBe(202);
    const all = await waitFor('every group counted', async () => {
      const r = await getJson(`${c.url}/v1/error-groups?env=${env}&from=${t}`);
      return r.body.total_groups === 151 ? r : null;
    });
    expect(all.body.groups).toHaveLength(100);
    const spreadGroup = all.body.groups.find((g: any) => g.kind === 'Spread');
    expect(spreadGroup.app_count).toBe(12);
    expect(spreadGroup.apps).toHaveLength(10);
    const few = await getJson(`${c.url}/v1/error-groups?env=${env}&from=${t}&limit=5`);
    expect(few.body.groups).toHaveLength(5);
    expect(few.body.total_groups).toBe(151);
    expect((await getJson(`${c.url}/v1/error-groups?limit=0`)).status).toBe(400);
  });

  it('answers GET /pipeline with this collector’s state, sampled every second', async () => {
    const pApp = `${app}-pipeline`;
    await postEvents(c.url, [log(pApp), log(pApp)]);
    const state = await waitFor('the app among the busiest', async () => {
      const r = await getJson(`${c.url}/pipeline`);
      return r.body.apps.some((a: any) => a.app === pApp) ? r.body : null;
    });
    expect(state).toMatchObject({
      mode: 'direct',
      storage: kind,
      health: { ready: true, draining: false, storage: 'up', redis: 'off', nats: 'off' },
      lanes: [
        { name: 'error', capacity: 2000 },
        { name: 'standard', capacity: 10000 },
      ],
      writer: { max_in_flight: 3 },
      queue: null,
    });
    expect(state.totals.accepted).toBeGreaterThanOrEqual(2);
    expect(state.apps.find((a: any) => a.app === pApp)).toMatchObject({ limit_per_s: 100 });
  });
});
