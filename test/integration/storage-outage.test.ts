import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { metric } from '../support/events';
import { acknowledgedIds, getJson, postEvents, waitFor } from '../support/http';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { TcpProxy } from '../support/tcp-proxy';
import { exactlyOnce, metricValue } from './queue-support';

/** Every read route of the collector that reads storage (the console's too), with the parameters it needs. */
const READS = [
  { route: 'GET /v1/events', path: '/v1/events?limit=5' },
  { route: 'GET /v1/metrics', path: '/v1/metrics?name=outage.probe' },
  { route: 'GET /v1/metrics', path: '/v1/metrics?name=outage.probe&resolution=1m' },
  { route: 'GET /v1/metrics/names', path: '/v1/metrics/names' },
  { route: 'GET /v1/apps', path: '/v1/apps' },
  { route: 'GET /v1/error-groups', path: '/v1/error-groups' },
] as const;

interface LogLine {
  level: string;
  msg: string;
  route?: string;
  refused?: number;
}

/**
 * PostgreSQL stopped (connections reset), restarted and paused (connections open, nothing answers) under a
 * running collector process with the defaults a user gets, through a proxy the test cuts: every
 * read route answers 503 with Retry-After, never 500; and the log says when refusals start and
 * end with their count, not one line per refused request.
 */
describe('storage outage under a running collector (postgres)', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let c: CollectorProcess;

  beforeAll(async () => {
    db = await createTestDatabase('storage_outage');
    const target = new URL(db.url);
    proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.start();
    const viaProxy = new URL(db.url);
    viaProxy.port = String(proxy.port);
    c = await startCollectorProcess(
      // ack=stored: intake answers 503 while storage is away (with ack=queued the lanes take it).
      { SLUICE_DATABASE_URL: viaProxy.toString(), SLUICE_ACK: 'stored', SLUICE_LOG_LEVEL: 'info' },
      { defaults: 'user' },
    );
  });

  afterAll(async () => {
    await c?.stop();
    await proxy?.close();
    await db?.drop();
  });

  const lines = (): LogLine[] =>
    c.output.flatMap((l) => {
      try {
        return [JSON.parse(l) as LogLine];
      } catch {
        return [];
      }
    });

  /** Answers every read route; returns how many were refused, after checking each refusal. */
  async function readsRefused(withinMs: number): Promise<Map<string, number>> {
    const refused = new Map<string, number>();
    await Promise.all(
      READS.map(async ({ route, path }) => {
        const started = Date.now();
        const res = await getJson(`${c.url}${path}`);
        expect({ path, status: res.status, error: res.body?.error }).toEqual({
          path,
          status: 503,
          error: 'storage_unavailable',
        });
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(Date.now() - started).toBeLessThan(withinMs);
        refused.set(route, (refused.get(route) ?? 0) + 1);
      }),
    );
    return refused;
  }

  async function servedAgain(): Promise<void> {
    await waitFor('ready again', async () => (await getJson(`${c.url}/readyz`)).status === 200, 20_000);
    for (const { path } of READS) expect((await getJson(`${c.url}${path}`)).status).toBe(200);
    expect((await postEvents(c.url, [metric('outage')])).status).toBe(202);
  }

  it('stopped, then paused: 503 storage_unavailable with Retry-After on every read route; one line when refusals start and one when they end', async () => {
    await servedAgain();
    const expected = new Map<string, number>();
    const add = (counts: Map<string, number>) => {
      for (const [route, n] of counts) expected.set(route, (expected.get(route) ?? 0) + n);
    };

    // Stopped: every connection reset at once.
    proxy.refuse();
    add(await readsRefused(1000));
    await waitFor('not ready', async () => (await getJson(`${c.url}/readyz`)).status === 503, 10_000);
    let posts = 0;
    for (let i = 0; i < 40; i++) {
      const res = await postEvents(c.url, [metric('outage')]);
      expect({ status: res.status, error: res.body.error }).toEqual({
        status: 503,
        error: 'storage_unavailable',
      });
      posts++;
      add(await readsRefused(1000));
    }
    expected.set('POST /v1/events', posts);
    proxy.restore();
    await servedAgain();
    const firstOutage = new Map(expected);

    // Paused: connections stay open and nothing answers; a read waits at most its timeout
    // (SLUICE_PG_READ_TIMEOUT_MS, 5 s) or a connection's (SLUICE_PG_READ_WAIT_MS, 250 ms).
    proxy.pause();
    const paused = await readsRefused(5000 + 1000);
    proxy.restore();
    await servedAgain();

    const log = lines();
    expect(log.filter((l) => l.msg === 'request failed')).toEqual([]);
    const started = log.filter((l) => l.msg === 'requests refused');
    const ended = log.filter((l) => l.msg === 'requests served again');
    const summary = (ls: LogLine[]) => ls.map((l) => `${l.route} ${l.refused ?? ''}`.trim()).sort();
    // One episode per route and outage; each ending line counts the refusals of its episode.
    expect(summary(started)).toEqual([...[...firstOutage.keys()], ...[...paused.keys()]].sort());
    expect(summary(ended)).toEqual(
      [
        ...[...firstOutage].map(([route, n]) => `${route} ${n}`),
        ...[...paused].map(([route, n]) => `${route} ${n}`),
      ].sort(),
    );
    // Hundreds of refusals, two lines about them per route and outage.
    const refusals = [...expected.values(), ...paused.values()].reduce((a, b) => a + b, 0);
    expect(refusals).toBeGreaterThan(150);
    expect(started.length + ended.length).toBe(2 * (firstOutage.size + paused.size));
  });
  it('a restart under load (connections reset, back at once): every event acknowledged with 202 is stored once', async () => {
    await servedAgain();
    const acknowledged: string[] = [];
    let requests = 0;
    let stop = false;
    const client = async (k: number) => {
      for (let i = 0; !stop && i < 2000; i++) {
        // One app per request: the rate limit per app (100/s by default) is not what this measures.
        const batch = Array.from({ length: 20 }, () => metric(`restart-${k}-${i}`));
        const res = await postEvents(c.url, batch).catch(() => null);
        if (res === null) continue;
        requests++;
        acknowledged.push(...acknowledgedIds(batch, res));
      }
    };
    const clients = [0, 1, 2, 3].map(client);
    await waitFor('load under way', () => requests >= 20, 10_000);
    proxy.refuse();
    await waitFor(
      'the writer sees it',
      async () => (await metricValue(c.url, 'sluice_storage_up')) === 0,
      10_000,
    );
    proxy.restore();
    const resumed = requests;
    await waitFor('load after the restart', () => requests >= resumed + 40, 30_000);
    stop = true;
    await Promise.all(clients);
    expect(acknowledged.length).toBeGreaterThan(200);
    await waitFor(
      'every acknowledged event stored',
      async () => (await exactlyOnce(db.url, acknowledged)) === null,
    );
  });
});
