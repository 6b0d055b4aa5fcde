/**
 * The read side from a terminal, on both storages, against a real collector with its defaults
 * (SLUICE_ACK=stored and a fast downsample job only, so the test waits seconds, not minutes):
 * `sluice query` runs the read API, `sluice tail` follows new events, `sluice delete` removes an
 * app's data, rollups included, after a confirmation.
 */
import { spawn } from 'node:child_process';
import { freePort } from '../../src/dev-cluster/free-port';
import { errorEvent, log, metric, type WireEvent } from '../support/events';
import { getJson, postEvents, waitFor } from '../support/http';
import { createTestDatabase, tempSqlitePath, type TestDatabase } from '../support/postgres';
import { CLI, runCli } from '../support/run-cli';
import { spawnSluice, waitUntilReady, type SluiceProcess } from '../support/sluice-process';

const HOUR = 3_600_000;
const MINUTE = 60_000;
/** An hour boundary two to three hours ago: old enough to split, young enough for raw retention. */
const H = Math.floor((Date.now() - 2 * HOUR) / HOUR) * HOUR;
const CUT = H + 20 * MINUTE + 30_000;

interface Target {
  readonly storageEnv: Record<string, string>;
  dispose(): Promise<void>;
}

async function postgresTarget(): Promise<Target> {
  const db: TestDatabase = await createTestDatabase('cli_read');
  return { storageEnv: { SLUICE_DATABASE_URL: db.url }, dispose: () => db.drop() };
}

async function sqliteTarget(): Promise<Target> {
  return { storageEnv: { SLUICE_SQLITE_PATH: tempSqlitePath('cli_read') }, dispose: async () => undefined };
}

describe.each([
  ['sqlite', sqliteTarget],
  ['postgres', postgresTarget],
])('sluice query, tail and delete on %s', (_kind, makeTarget) => {
  let target: Target;
  let collector: SluiceProcess;
  let url: string;

  beforeAll(async () => {
    target = await makeTarget();
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    collector = spawnSluice('serve', {
      ...target.storageEnv,
      SLUICE_PORT: String(port),
      SLUICE_OTLP_PORT: '0',
      SLUICE_ACK: 'stored',
      SLUICE_JOB_DOWNSAMPLE_INTERVAL_MS: '200',
      SLUICE_DRAIN_DELAY_MS: '0',
    });
    await waitUntilReady(collector, 'collector', url, 20_000);
  });

  afterAll(async () => {
    await collector?.stop();
    await target?.dispose();
  });

  const hourPoints = async (app: string): Promise<Array<{ ts: number; count: number; sum: number }>> =>
    (await getJson(`${url}/v1/metrics?name=cpu&app=${app}&resolution=1h&from=${H}&to=${H + HOUR}`)).body
      .points;
  const eventIds = async (app: string): Promise<string[]> =>
    ((await getJson(`${url}/v1/events?app=${app}&limit=1000`)).body.events as WireEvent[]).map((e) =>
      String(e.id),
    );
  const cli = (args: string[], input?: string) =>
    runCli(args, { ...target.storageEnv, SLUICE_LOG_LEVEL: 'warn' }, { input });

  it('queries, follows and deletes, rollups included', async () => {
    const data = (app: string) => ({
      oldError: errorEvent(app, { ts: H + 5 * MINUTE }),
      oldSample: metric(app, { name: 'cpu', ts: H + 5 * MINUTE, value: 1 }),
      newLog: log(app, { ts: H + 40 * MINUTE }),
      newSample: metric(app, { name: 'cpu', ts: H + 40 * MINUTE, value: 10 }),
    });
    const gone = data('gone');
    const keep = data('keep');
    for (const events of [Object.values(gone), Object.values(keep)]) {
      expect((await postEvents(url, events)).status).toBe(202);
    }
    for (const app of ['gone', 'keep']) {
      await waitFor(`the 1h rollup of ${app}`, async () => (await hourPoints(app))[0]?.count === 2, 20_000);
    }

    // sluice query: a table by default, the API's JSON with --json; a bad parameter is named.
    const table = await runCli(['query', 'events', '--app', 'gone', '--url', url]);
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^id +type +name +ts +source/);
    expect(table.stdout).toContain('checkout.failed');
    const json = await runCli([
      'query',
      'events',
      '--app',
      'gone',
      '--type',
      'error',
      '--json',
      '--url',
      url,
    ]);
    expect(JSON.parse(json.stdout).events.map((e: WireEvent) => e.id)).toEqual([gone.oldError.id]);
    const points = await runCli([
      'query',
      'metrics',
      '--name',
      'cpu',
      '--app',
      'keep',
      '--resolution',
      '1h',
      '--from',
      new Date(H).toISOString(),
      '--json',
      '--url',
      url,
    ]);
    expect(JSON.parse(points.stdout).points).toEqual([expect.objectContaining({ ts: H, count: 2, sum: 11 })]);
    const bad = await runCli(['query', 'events', '--limit', 'lots', '--url', url]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/400 .*limit/);

    // sluice tail: new events appear as they are stored, until Ctrl-C.
    const tail = spawn(
      process.execPath,
      [CLI, 'tail', '--app', 'gone', '--interval', '100ms', '--json', '--url', url],
      {
        env: { PATH: process.env.PATH ?? '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let followed = '';
    tail.stdout.setEncoding('utf8').on('data', (c: string) => (followed += c));
    const tailExited = new Promise<number | null>((resolve) => tail.once('exit', (code) => resolve(code)));
    try {
      const fresh = log('gone', { message: 'followed live' });
      expect((await postEvents(url, [fresh, log('keep')])).status).toBe(202);
      await waitFor('tail to print the new event', () => followed.includes(String(fresh.id)), 10_000);
      expect(
        followed
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l).source.app),
      ).toEqual(['gone']);
    } finally {
      tail.kill('SIGINT');
    }
    expect(await tailExited).toBe(0);

    // sluice delete: nothing without the app's name typed back.
    const refused = await cli(['delete', '--app', 'gone'], 'keep\n');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/not confirmed.*nothing deleted/);
    expect(await eventIds('gone')).toContain(gone.oldError.id);

    // --before: older data goes; the hour holding the cut is recomputed from what is left.
    const before = await cli(['delete', '--app', 'gone', '--before', new Date(CUT).toISOString()], 'gone\n');
    expect(before.code).toBe(0);
    expect(before.stdout).toMatch(
      /deleted 1 events, 1 metric samples, 1 1m and 1 1h rollup rows and \d+ loss-map rows of app "gone"/,
    );
    expect(await eventIds('gone')).not.toContain(gone.oldError.id);
    expect(await eventIds('gone')).toContain(gone.newLog.id);
    await waitFor('the hour of the cut to be refolded', async () => {
      const p = await hourPoints('gone');
      return p.length === 1 && p[0]?.count === 1 && p[0].sum === 10;
    });
    expect(await hourPoints('keep')).toEqual([expect.objectContaining({ count: 2, sum: 11 })]);
    expect(await eventIds('keep')).toContain(keep.oldError.id);

    // --id: one event.
    const one = await cli(['delete', '--app', 'gone', '--id', String(gone.newLog.id), '--yes']);
    expect(one.stdout).toMatch(/deleted 1 events, 0 metric samples, .* and 0 loss-map rows/);
    expect(one.stdout).toContain('the loss map still counts it as stored');
    expect(await eventIds('gone')).not.toContain(gone.newLog.id);

    // Everything of the app, for scripts: --yes. Its loss-map rows go too.
    await waitFor('the loss map to count app "gone"', async () => {
      const r = await getJson(`${url}/v1/outcomes?app=gone&from=${H}`);
      return r.status === 200 && JSON.stringify(r.body).includes('"stored"');
    });
    const all = await cli(['delete', '--app', 'gone', '--yes']);
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(/and [1-9]\d* loss-map rows of app "gone"/);
    expect(await eventIds('gone')).toEqual([]);
    expect(await hourPoints('gone')).toEqual([]);
    const raw = await getJson(`${url}/v1/metrics?name=cpu&app=gone&from=${H}`);
    expect(raw.body.points).toEqual([]);
    expect(await hourPoints('keep')).toEqual([expect.objectContaining({ count: 2, sum: 11 })]);
  });
});
