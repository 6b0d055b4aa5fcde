import { errorEvent, lifecycle, log, metric } from '../support/events';
import { getJson, postEvents, waitFor } from '../support/http';
import { startInProcess, type InProcessCollector } from '../support/in-process';
import { createTestDatabase, tempSqlitePath, type TestDatabase } from '../support/postgres';

/** Nesting past the default limit (8 levels). */
const DEEP = `${'['.repeat(20)}${']'.repeat(20)}`;
/** `,` and `:` a body may hold with 50 events a request and 32 attributes, less one (src/events/wire-shape.ts). */
const SEPARATOR_BUDGET = 2 * 50 * (2 * (21 + 32) + 1);

/** `event` as JSON text with `count` more members `name0`, `name1`, … whose value is `raw` JSON text. */
function withMember(event: object, name: string, raw: string, count = 1): string {
  const members = Array.from({ length: count }, (_, k) => `"${name}${count > 1 ? k : ''}":${raw}`);
  return `${JSON.stringify(event).slice(0, -1)},${members.join(',')}}`;
}

/** The wire contract of POST /v1/events and the read API, against both storages. */
describe.each(['sqlite', 'postgres'] as const)('wire contract (%s)', (kind) => {
  let db: TestDatabase | null = null;
  let c: InProcessCollector;
  const app = `contract-${kind}`;

  beforeAll(async () => {
    db = kind === 'postgres' ? await createTestDatabase('contract') : null;
    c = await startInProcess({
      ...(db ? { SLUICE_DATABASE_URL: db.url } : { SLUICE_SQLITE_PATH: tempSqlitePath('contract') }),
      SLUICE_FLUSH_INTERVAL_MS: '5',
      SLUICE_MAX_EVENTS_PER_REQUEST: '50',
      SLUICE_MAX_BODY_BYTES: '64KiB',
    });
  });

  afterAll(async () => {
    await c?.stop();
    await db?.drop();
  });

  async function stored(query: string): Promise<any[]> {
    const res = await getJson(`${c.url}/v1/events?${query}`);
    expect(res.status).toBe(200);
    return res.body.events;
  }

  it('202 with every event taken, readable in the wire shape', async () => {
    const events = [metric(app), errorEvent(app), lifecycle(app), log(app)];
    const res = await postEvents(c.url, events);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ accepted: 4, rejected: [] });
    const got = await waitFor('events stored', async () => {
      const rows = await stored(`app=${app}&limit=10`);
      return rows.length === 4 ? rows : null;
    });
    const byId = new Map(got.map((e) => [e.id, e]));
    for (const e of events) expect(byId.get(e.id)).toEqual({ attributes: {}, ...e });
  });

  it('202 with invalid events listed by index and reason (partial success)', async () => {
    const good = metric(app);
    const res = await postEvents(c.url, [{ ...metric(app), id: 'nope' }, good, 'x', { ...log(app), ts: 1 }]);
    expect(res.status).toBe(202);
    expect(res.body.accepted).toBe(1);
    expect(res.body.rejected).toEqual([
      { index: 0, reason: 'id_invalid', field: 'id', hint: expect.stringMatching(/^id must be a UUID/) },
      { index: 2, reason: 'not_an_object', hint: 'each element of "events" must be a JSON object' },
      {
        index: 3,
        reason: 'ts_out_of_range',
        field: 'ts',
        hint: expect.stringMatching(/^ts must be milliseconds/),
      },
    ]);
  });

  it('the same batch sent three times is stored once', async () => {
    const dedupeApp = `${app}-dedupe`;
    const batch = Array.from({ length: 20 }, (_, i) => metric(dedupeApp, { value: i }));
    for (let i = 0; i < 3; i++) expect((await postEvents(c.url, batch)).status).toBe(202);
    await waitFor('dedupe counter', async () => {
      const text = await (await fetch(`${c.url}/metrics`)).text();
      return /sluice_events_deduplicated_total (\d+)/.exec(text)?.[1] === '40';
    });
    expect(await stored(`app=${dedupeApp}&limit=1000`)).toHaveLength(20);
  });

  it.each(['application/json; charset="utf-8"', 'application/json;charset=UTF-8', 'Application/JSON'])(
    'Content-Type %s is JSON in UTF-8',
    async (type) => {
      const res = await postEvents(c.url, [metric(app)], { headers: { 'content-type': type } });
      expect(res).toMatchObject({ status: 202, body: { accepted: 1 } });
    },
  );

  it('gzip bodies are accepted', async () => {
    const res = await postEvents(c.url, [metric(app)], { gzip: true });
    expect(res).toMatchObject({ status: 202, body: { accepted: 1 } });
  });

  it.each<[string, number, string, () => Promise<Awaited<ReturnType<typeof postEvents>>>]>([
    ['not JSON', 400, 'invalid_json', () => postEvents(c.url, null, { raw: '{"events": [' })],
    ['no events array', 400, 'invalid_body', () => postEvents(c.url, null, { raw: '{"event": []}' })],
    ['an array body', 400, 'invalid_body', () => postEvents(c.url, null, { raw: '[]' })],
    [
      'too deep',
      400,
      'too_deep',
      () => postEvents(c.url, null, { raw: `{"events":[${'['.repeat(20)}${']'.repeat(20)}]}` }),
    ],
    // Nesting where the single pass reads: the body is refused before anything skips or parses it.
    [
      'too deep in an unknown member of a valid event',
      400,
      'too_deep',
      () => postEvents(c.url, null, { raw: `{"events":[${withMember(metric(app), 'extra', DEEP)}]}` }),
    ],
    [
      'too deep in an attribute',
      400,
      'too_deep',
      () =>
        postEvents(c.url, null, {
          raw: `{"events":[${JSON.stringify(metric(app)).replace('"attributes":{', `"attributes":{"deep":${DEEP},`)}]}`,
        }),
    ],
    [
      'too deep in an element after a valid event',
      400,
      'too_deep',
      () => postEvents(c.url, null, { raw: `{"events":[${JSON.stringify(metric(app))},${DEEP}]}` }),
    ],
    [
      'too deep in the report',
      400,
      'too_deep',
      () => postEvents(c.url, null, { raw: `{"events":[${JSON.stringify(metric(app))}],"report":${DEEP}}` }),
    ],
    [
      'too many values in unknown members of a valid event',
      413,
      'too_many_values',
      () =>
        postEvents(c.url, null, {
          raw: `{"events":[${withMember(metric(app), 'k', '0', SEPARATOR_BUDGET / 2 + 50)}]}`,
        }),
    ],
    [
      'corrupt gzip',
      400,
      'invalid_gzip',
      () => postEvents(c.url, null, { raw: 'not gzip', headers: { 'content-encoding': 'gzip' } }),
    ],
    [
      'over the body limit',
      413,
      'body_too_large',
      () => postEvents(c.url, null, { raw: `{"events":[],"pad":"${'x'.repeat(70_000)}"}` }),
    ],
    [
      'too many events',
      413,
      'too_many_events',
      () =>
        postEvents(
          c.url,
          Array.from({ length: 51 }, () => metric(app)),
        ),
    ],
    [
      'text/plain',
      415,
      'unsupported_media_type',
      () => postEvents(c.url, [], { headers: { 'content-type': 'text/plain' } }),
    ],
    [
      'latin1 charset',
      415,
      'unsupported_media_type',
      () => postEvents(c.url, [], { headers: { 'content-type': 'application/json; charset=latin1' } }),
    ],
    [
      'UTF-8 in another charset than utf-8',
      415,
      'unsupported_media_type',
      () => postEvents(c.url, [], { headers: { 'content-type': 'application/json; charset="utf-16"' } }),
    ],
    [
      'bytes that are not UTF-8',
      400,
      'invalid_utf8',
      () =>
        postEvents(c.url, null, {
          raw: Buffer.concat([
            Buffer.from('{"events":[],"x":"'),
            Buffer.from([0xff, 0xfe]),
            Buffer.from('"}'),
          ]),
        }),
    ],
    [
      'brotli',
      415,
      'unsupported_encoding',
      () => postEvents(c.url, [], { headers: { 'content-encoding': 'br' } }),
    ],
  ])('%s → %i %s', async (_label, status, code, send) => {
    const res = await send();
    expect(res.status).toBe(status);
    expect(res.body.error).toBe(code);
    expect(typeof res.body.message).toBe('string');
  });

  it('prototype keys sent as raw JSON text pollute nothing and are not stored', async () => {
    const prototypeKeys = Object.getOwnPropertyNames(Object.prototype);
    const protoApp = `${app}-proto`;
    const kept = crypto.randomUUID();
    const ts = Date.now();
    // Raw text, as the wire delivers it: a JS object literal would set its own prototype instead of
    // carrying a "__proto__" key, and the collector would never see one.
    const raw = `{"events":[
      {"id":"${kept}","type":"log","name":"p","ts":${ts},"message":"m",
       "source":{"app":"${protoApp}","__proto__":{"env":"polluted"}},
       "__proto__":{"polluted":1,"type":"error"},"constructor":{"prototype":{"polluted":2}},
       "attributes":{"ok":"yes"}},
      {"id":"${crypto.randomUUID()}","type":"log","name":"p","ts":${ts},"source":{"app":"${protoApp}"},
       "attributes":{"__proto__":{"polluted":3}}},
      {"id":"${crypto.randomUUID()}","type":"log","name":"p","ts":${ts},"source":{"app":"${protoApp}"},
       "attributes":{"constructor":{"prototype":{"polluted":4}}}}
    ],"__proto__":{"polluted":5}}`;
    expect(Object.keys(JSON.parse(raw) as object)).toEqual(['events', '__proto__']);

    const res = await postEvents(c.url, null, { raw });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      accepted: 1,
      rejected: [
        {
          index: 1,
          reason: 'attribute_key_invalid',
          field: 'attributes.__proto__',
          hint: expect.any(String),
        },
        // The hint is on the first rejection of each reason only.
        { index: 2, reason: 'attribute_key_invalid', field: 'attributes.constructor' },
      ],
    });
    const rows = await waitFor('the kept event stored', async () => {
      const r = await stored(`app=${protoApp}`);
      return r.length === 1 ? r : null;
    });
    expect(rows[0]).toEqual({
      id: kept,
      type: 'log',
      name: 'p',
      ts,
      source: { app: protoApp },
      message: 'm',
      attributes: { ok: 'yes' },
    });
    expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(prototypeKeys);
    const fresh: Record<string, unknown> = {};
    expect(fresh.polluted).toBeUndefined();
    expect(Object.getPrototypeOf(fresh)).toBe(Object.prototype);
  });

  it('GET /v1/events pages newest first with a keyset cursor and filters', async () => {
    const pageApp = `${app}-pages`;
    const t = Date.now() - 60_000;
    const events = Array.from({ length: 25 }, (_, i) =>
      i % 5 === 0 ? errorEvent(pageApp, { ts: t + i }) : metric(pageApp, { ts: t + i }),
    );
    expect((await postEvents(c.url, events)).status).toBe(202);
    await waitFor('page events stored', async () => (await stored(`app=${pageApp}&limit=100`)).length === 25);

    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const res: { body: { events: Array<{ ts: number }>; next_cursor: string | null } } = await getJson(
        `${c.url}/v1/events?app=${pageApp}&limit=10${cursor ? `&cursor=${cursor}` : ''}`,
      );
      seen.push(...res.body.events.map((e) => e.ts));
      cursor = res.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(events.map((e) => e.ts as number).sort((a, b) => b - a));

    expect(await stored(`app=${pageApp}&type=error`)).toHaveLength(5);
    expect(await stored(`app=${pageApp}&from=${t + 10}&to=${t + 20}`)).toHaveLength(10);
    expect(await stored(`app=${pageApp}&name=checkout.failed&from=${t + 10}`)).toHaveLength(3);
  });

  it('GET /v1/metrics returns raw samples and summaries oldest first', async () => {
    const mApp = `${app}-metrics`;
    const t = Date.now() - 30_000;
    await postEvents(c.url, [
      metric(mApp, { name: 'cpu.load', ts: t + 2, value: 5 }),
      metric(mApp, {
        name: 'cpu.load',
        ts: t + 1,
        value: undefined,
        summary: { count: 2, min: 1, max: 3, sum: 4, avg: 2 },
      }),
    ]);
    const res = await waitFor('metrics stored', async () => {
      const r = await getJson(`${c.url}/v1/metrics?name=cpu.load&app=${mApp}`);
      return r.body.points?.length === 2 ? r : null;
    });
    expect(res.body.points).toEqual([
      { ts: t + 1, app: mApp, count: 2, min: 1, max: 3, sum: 4, avg: 2, kind: 'summary' },
      { ts: t + 2, app: mApp, count: 1, min: 5, max: 5, sum: 5, avg: 5, kind: 'sample' },
    ]);
  });

  it.each([
    ['/v1/events?limit=0', 'limit'],
    ['/v1/events?limit=abc', 'limit'],
    ['/v1/events?type=trace', 'type'],
    ['/v1/events?from=-1', 'from'],
    ['/v1/events?cursor=garbage', 'cursor'],
    // Both used to reach PostgreSQL and answer 500: NUL in a text parameter, a failed uuid cast.
    ['/v1/events?app=%00', 'app'],
    ['/v1/events?name=a%00b', 'name'],
    [`/v1/events?cursor=${Buffer.from(`1:${'-'.repeat(36)}`).toString('base64url')}`, 'cursor'],
    [
      `/v1/events?cursor=${Buffer.from(`9999999999999999:0190f3c2-0000-7000-8000-000000000001`).toString('base64url')}`,
      'cursor',
    ],
    ['/v1/metrics?name=x&app=%00', 'app'],
    ['/v1/events?form=1', 'form'],
    ['/v1/events?app=a&app=b', 'app'],
    ['/v1/metrics', 'name'],
    ['/v1/metrics?name=x&resolution=5m', 'resolution'],
    ['/v1/metrics?name=x&resolution=1d', 'resolution'],
  ])('GET %s → 400 naming %s', async (path, parameter) => {
    const res = await getJson(`${c.url}${path}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_parameter');
    expect(res.body.message).toContain(`"${parameter}"`);
  });

  it('operations endpoints: livez, readyz, metrics; unknown route 404', async () => {
    expect((await getJson(`${c.url}/livez`)).status).toBe(200);
    expect((await getJson(`${c.url}/readyz`)).body).toEqual({ status: 'ready' });
    const text = await (await fetch(`${c.url}/metrics`)).text();
    for (const name of [
      'sluice_events_received_total',
      'sluice_events_accepted_total',
      'sluice_events_rejected_total{reason="id_invalid"}',
      'sluice_lane_depth_events{lane="standard"}',
      'sluice_lane_capacity_events{lane="error"}',
      'sluice_batch_size_events_bucket',
      'sluice_flush_duration_seconds_bucket',
      'sluice_http_request_duration_seconds_bucket{le="0.001",route="/v1/events",method="POST",status="202"}',
      'process_cpu_seconds_total',
    ]) {
      expect(text).toContain(name);
    }
    const nf = await getJson(`${c.url}/nope`);
    expect(nf).toMatchObject({ status: 404, body: { error: 'not_found' } });
  });
});
