/**
 * The "Sluice data" Grafana dashboard (deploy/grafana/dashboards/sluice-data.json): every panel's
 * and variable's SQL, expanded as Grafana expands it, runs against a real PostgreSQL holding the
 * schema and data a real collector stored, as the read-only role deploy/postgres/grafana-reader.sql
 * creates, and answers the columns and values the panels show.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { findProgram, searchFolders } from '../../src/dev-cluster/executables';
import { locateRepoFiles } from '../../src/dev-cluster/repo-files';
import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { errorEvent, lifecycle, log, metric, type WireEvent } from '../support/events';
import { postEvents, waitFor } from '../support/http';
import { adminUrl, createTestDatabase, type TestDatabase } from '../support/postgres';
import { expandGrafanaSql, type GrafanaQueryContext, type VariableSelection } from './support/grafana-sql';

interface Target {
  readonly rawSql: string;
  readonly format: 'time_series' | 'table';
  readonly datasource: { readonly uid: string };
}
interface Panel {
  readonly title: string;
  readonly type: string;
  readonly targets: readonly Target[];
}
interface Variable {
  readonly name: string;
  readonly query: string;
  readonly multi: boolean;
  readonly includeAll: boolean;
  readonly allValue?: string;
  readonly datasource: { readonly uid: string };
}
interface Dashboard {
  readonly title: string;
  readonly panels: readonly Panel[];
  readonly templating: { readonly list: readonly Variable[] };
}

const files = locateRepoFiles();
const dashboard = JSON.parse(
  readFileSync(path.join(files.root, 'deploy/grafana/dashboards/sluice-data.json'), 'utf8'),
) as Dashboard;
const datasources = readFileSync(
  path.join(files.root, 'deploy/grafana/provisioning/datasources/postgres.yml'),
  'utf8',
);

const suffix = randomBytes(4).toString('hex');
const SHOP = `shop-${suffix}`;
const API = `api-${suffix}`;
const READER = `grafana_reader_${suffix}`;
const READER_PASSWORD = `pw-${suffix}`;

let db: TestDatabase;
let collector: CollectorProcess;
let reader: pg.Client;
const sent: WireEvent[] = [];

/** Runs deploy/postgres/grafana-reader.sql with psql, as the PostgreSQL image's init script does. */
function createReaderRole(databaseUrl: string): void {
  const psql = findProgram('psql', searchFolders(process.env.PATH));
  if (psql === null) throw new Error('psql is not installed: apt-get install -y postgresql-client');
  const url = new URL(databaseUrl);
  const r = spawnSync(
    psql,
    [
      ...['-v', 'ON_ERROR_STOP=1', '-X', '-q', '-d', databaseUrl],
      ...['-v', `reader=${READER}`, '-v', `password=${READER_PASSWORD}`],
      ...['-v', `owner=${decodeURIComponent(url.username) || 'postgres'}`],
      ...['-v', `dbname=${url.pathname.slice(1)}`],
      ...['-f', path.join(files.root, 'deploy/postgres/grafana-reader.sql')],
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`psql grafana-reader.sql failed:\n${r.stdout}${r.stderr}`);
}

async function dropReaderRole(): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    await admin.query(`DROP ROLE IF EXISTS "${READER}"`);
  } finally {
    await admin.end();
  }
}

beforeAll(async () => {
  db = await createTestDatabase('grafana_data');
  // Before the collector creates the tables: default privileges must cover them as they appear.
  createReaderRole(db.url);
  collector = await startCollectorProcess({
    SLUICE_DATABASE_URL: db.url,
    SLUICE_ACK: 'stored',
    SLUICE_JOB_DOWNSAMPLE_INTERVAL_MS: '500',
  });
  const now = Date.now();
  const at = (secondsAgo: number) => ({ ts: now - secondsAgo * 1000 });
  sent.push(
    errorEvent(SHOP, {
      ...at(30),
      source: { app: SHOP, version: '1.4.2' },
      error: { message: 'card declined', kind: 'PaymentError' },
    }),
    errorEvent(API, {
      ...at(20),
      source: { app: API, version: '2.0.0' },
      error: { message: "user's token expired", kind: 'AuthError' },
    }),
    lifecycle(SHOP, at(40)),
    log(SHOP, at(35)),
    log(API, { ...at(10), message: 'token refreshed', attributes: { 'log.severity': 'WARN' } }),
    ...[2, 4, 9].map((value, i) => metric(SHOP, { ...at(50 + i), name: 'render.frame_drop', value })),
    metric(API, {
      ...at(15),
      name: 'http.latency_ms',
      value: undefined,
      summary: { count: 4, min: 10, max: 40, sum: 100, avg: 25 },
    }),
  );
  const answer = await postEvents(collector.url, sent);
  if (answer.status !== 202 || answer.body.accepted !== sent.length)
    throw new Error(`ingest answered ${answer.status} ${JSON.stringify(answer.body)}`);
  // The downsample job folds the samples into both rollup tables.
  const admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  try {
    await waitFor(
      'the rollups to hold every sample',
      async () => {
        const r = await admin.query<{ m: string; h: string }>(
          `SELECT (SELECT coalesce(sum(count), 0) FROM metric_rollups_1m WHERE app = ANY($1)) AS m,
                  (SELECT coalesce(sum(count), 0) FROM metric_rollups_1h WHERE app = ANY($1)) AS h`,
          [[SHOP, API]],
        );
        return r.rows[0]?.m === '7' && r.rows[0]?.h === '7';
      },
      20_000,
    );
  } finally {
    await admin.end();
  }
  const readerUrl = new URL(db.url);
  readerUrl.username = READER;
  readerUrl.password = READER_PASSWORD;
  reader = new pg.Client({ connectionString: readerUrl.toString() });
  await reader.connect();
}, 60_000);

afterAll(async () => {
  await reader?.end().catch(() => undefined);
  await collector?.stop();
  await db?.drop();
  await dropReaderRole();
});

function variable(name: string): Variable {
  const v = dashboard.templating.list.find((x) => x.name === name);
  if (!v) throw new Error(`no variable ${name}`);
  return v;
}

function selection(name: string, selected: readonly string[] | 'all', options: readonly string[]) {
  const v = variable(name);
  return {
    selected,
    options,
    multi: v.multi,
    includeAll: v.includeAll,
    ...(v.allValue !== undefined && { allValue: v.allValue }),
  } satisfies VariableSelection;
}

/** The last hour, 1-minute interval, with these variable selections. */
function context(app: readonly string[] | 'all', metricNames: readonly string[] | 'all' = 'all') {
  return {
    from: new Date(Date.now() - 3_600_000),
    to: new Date(),
    intervalMs: 60_000,
    variables: {
      app: selection('app', app, [SHOP, API]),
      metric: selection('metric', metricNames, ['http.latency_ms', 'render.frame_drop']),
    },
  } satisfies GrafanaQueryContext;
}

async function run(sql: string, c: GrafanaQueryContext) {
  const r = await reader.query(expandGrafanaSql(sql, c));
  return { columns: r.fields.map((f) => f.name), rows: r.rows as Array<Record<string, unknown>> };
}

function panel(title: string): Target {
  const p = dashboard.panels.find((x) => x.title === title);
  const target = p?.targets[0];
  if (!target) throw new Error(`no panel "${title}" with a query`);
  return target;
}

/** Sums `value` per `metric` over the rows of a time series answer. */
function totals(rows: ReadonlyArray<Record<string, unknown>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of rows) out[String(r.metric)] = (out[String(r.metric)] ?? 0) + Number(r.value);
  return out;
}

describe('the "Sluice data" dashboard against PostgreSQL', () => {
  it('is provisioned with a PostgreSQL data source that every query uses', () => {
    expect(datasources).toMatch(/uid: sluice-postgres\n\s+type: grafana-postgresql-datasource/);
    expect(datasources).toMatch(/user: grafana_reader\n/);
    const uids = new Set([
      ...dashboard.panels.flatMap((p) => p.targets.map((t) => t.datasource.uid)),
      ...dashboard.templating.list.map((v) => v.datasource.uid),
    ]);
    expect([...uids]).toEqual(['sluice-postgres']);
    expect(dashboard.panels.map((p) => p.title)).toEqual([
      'Events stored per type',
      'Events stored per app',
      'Latest errors',
      'Ingest lag per app',
      'Metric average by name',
      'Metric samples by name',
      'Logs',
      'Loss map',
    ]);
  });

  it('offers the apps and their metric names as variables', async () => {
    const apps = await run(variable('app').query, context('all'));
    expect(apps.rows.map((r) => Object.values(r)[0])).toEqual(expect.arrayContaining([SHOP, API]));
    const names = await run(variable('metric').query, context([SHOP]));
    expect(names.rows.map((r) => Object.values(r)[0])).toEqual(['render.frame_drop']);
  });

  it('every time series query answers time, metric, value in time order', async () => {
    for (const p of dashboard.panels.filter((x) => x.targets[0]?.format === 'time_series')) {
      for (const c of [context('all'), context([SHOP, API], ['render.frame_drop'])]) {
        const { columns, rows } = await run(p.targets[0]?.rawSql ?? '', c);
        expect({ panel: p.title, columns }).toEqual({ panel: p.title, columns: ['time', 'metric', 'value'] });
        const times = rows.map((r) => Number(r.time));
        expect(times).toEqual([...times].sort((a, b) => a - b));
      }
    }
  });

  it('counts the stored events per type and per app', async () => {
    const perType = await run(panel('Events stored per type').rawSql, context('all'));
    expect(totals(perType.rows)).toEqual({ error: 2, lifecycle: 1, log: 2, metric: 4 });
    const shopOnly = await run(panel('Events stored per type').rawSql, context([SHOP]));
    expect(totals(shopOnly.rows)).toEqual({ error: 1, lifecycle: 1, log: 1, metric: 3 });
    const perApp = await run(panel('Events stored per app').rawSql, context('all'));
    expect(totals(perApp.rows)).toEqual({ [SHOP]: 6, [API]: 3 });
  });

  it('lists the latest errors with message, kind, app and version, newest first', async () => {
    const { columns, rows } = await run(panel('Latest errors').rawSql, context('all'));
    expect(columns).toEqual(['time', 'app', 'version', 'name', 'kind', 'message']);
    expect(rows.map(({ app, version, kind, message }) => ({ app, version, kind, message }))).toEqual([
      { app: API, version: '2.0.0', kind: 'AuthError', message: "user's token expired" },
      { app: SHOP, version: '1.4.2', kind: 'PaymentError', message: 'card declined' },
    ]);
    expect(rows[0]?.time).toBeInstanceOf(Date);
  });

  it('shows each app’s ingest lag: now minus its newest stored ts', async () => {
    const { columns, rows } = await run(panel('Ingest lag per app').rawSql, context('all'));
    expect(columns).toEqual(['app', 'lag_seconds']);
    const lag = Object.fromEntries(rows.map((r) => [r.app, Number(r.lag_seconds)]));
    // SHOP's newest event is 30 s old, API's 10 s, when they were sent.
    expect(Object.keys(lag).sort()).toEqual([API, SHOP].sort());
    expect(lag[SHOP]).toBeGreaterThanOrEqual(30);
    expect(lag[API]).toBeGreaterThanOrEqual(10);
    expect((lag[SHOP] ?? 0) - (lag[API] ?? 0)).toBeCloseTo(20, 0);
  });

  it('averages and counts metric samples by name from the rollups (summaries weigh by count)', async () => {
    const avg = await run(panel('Metric average by name').rawSql, context('all'));
    const avgByName = Object.fromEntries(avg.rows.map((r) => [r.metric, Number(r.value)]));
    // One-minute interval: the three frame-drop samples may straddle two buckets.
    expect(avgByName['http.latency_ms']).toBe(25);
    const count = await run(panel('Metric samples by name').rawSql, context('all'));
    expect(totals(count.rows)).toEqual({ 'render.frame_drop': 3, 'http.latency_ms': 4 });
    // Per interval, average × samples summed back gives the samples' sum: (2 + 4 + 9) / 3 = 5.
    const shop = context([SHOP], ['render.frame_drop']);
    const shopAvg = (await run(panel('Metric average by name').rawSql, shop)).rows;
    const shopCount = (await run(panel('Metric samples by name').rawSql, shop)).rows;
    expect(shopAvg.map((r) => Number(r.time))).toEqual(shopCount.map((r) => Number(r.time)));
    const weighted = shopAvg.reduce((sum, r, i) => sum + Number(r.value) * Number(shopCount[i]?.value), 0);
    expect(weighted / 3).toBeCloseTo(5, 10);
  });

  it('shows the newest log lines of the selected apps: message, level, app, version, name', async () => {
    const p = dashboard.panels.find((x) => x.title === 'Logs');
    expect(p?.type).toBe('logs');
    const { columns, rows } = await run(panel('Logs').rawSql, context('all'));
    // Grafana's logs panel: the first time field is the time, the first string field the line,
    // `level` its level, `id` its identity; the other fields are shown with each line.
    expect(columns).toEqual(['time', 'body', 'level', 'app', 'version', 'name', 'id']);
    expect(rows.map(({ body, level, app }) => ({ body, level, app }))).toEqual([
      { body: 'token refreshed', level: 'warn', app: API },
      { body: 'cart has 3 items', level: null, app: SHOP },
    ]);
    expect(rows[0]?.time).toBeInstanceOf(Date);
    const ids = new Set(sent.filter((e) => e.type === 'log').map((e) => e.id));
    expect(rows.every((r) => ids.has(r.id))).toBe(true);
    const shop = await run(panel('Logs').rawSql, context([SHOP]));
    expect(shop.rows.map((r) => r.app)).toEqual([SHOP]);
  });

  it('draws the loss map per app: generated, stored, losses, pending, shed requests (GET /v1/outcomes)', async () => {
    const flow = async (app: string) => {
      const { columns, rows } = await run(panel('Loss map').rawSql, context([app]));
      expect(columns).toEqual(['app', 'stage', 'reason', 'events']);
      return rows.map(
        (r) => `${String(r.stage)}${r.reason ? ` ${String(r.reason)}` : ''}: ${Number(r.events)}`,
      );
    };
    // The loss-map counts of intake decisions are written every second: wait for them.
    await waitFor('the loss map to settle', async () => (await flow(SHOP)).includes('pending pipeline: 0'));
    expect(await flow(SHOP)).toEqual([
      'generated: 6',
      'stored: 6',
      'pending sdk: 0',
      'pending pipeline: 0',
      'shed requests: 0',
    ]);
    const answer = await fetch(`${collector.url}/v1/outcomes?app=${API}`).then((r) => r.json());
    expect(await flow(API)).toEqual([
      `generated: ${answer.generated}`,
      `stored: ${answer.stored}`,
      `pending sdk: ${answer.pending.sdk}`,
      `pending pipeline: ${answer.pending.pipeline}`,
      `shed requests: ${answer.shed_requests}`,
    ]);
  });

  it('reads as a role that cannot write', async () => {
    await expect(reader.query(`DELETE FROM events WHERE app = '${SHOP}'`)).rejects.toThrow(
      /read-only transaction|permission denied/,
    );
  });
});
