import {
  INFLUX_WRITE_PATH,
  influxdInstalled,
  influxStoredPoints,
  startInfluxd,
} from '../baselines/influxdb-server';
import type { TsdbProcess } from '../baselines/tsdb-process';
import {
  startVictoriaMetrics,
  VICTORIA_WRITE_PATH,
  victoriaMetricsInstalled,
  victoriaStoredPoints,
} from '../baselines/victoria-metrics-server';
import { startCollector } from '../collector-process';
import type { ServiceProcess } from '../service-process';
import { writerFigures } from '../collector-metrics';
import type { BenchContext } from '../context';
import { createHttpClient } from '../http-client';
import { runClosedLoop } from '../load-closed';
import { metricPoints, recycleJson, recycleLines } from '../metric-points';
import { PgBackendCpu } from '../pg-backend-cpu';
import { RowCounter } from '../pg-bench-db';
import { measureBlockMerge } from '../block-merge';
import { measureRollupFold } from '../rollup-fold';
import { figure, round } from '../rows';
import { CONNECTIONS, measureLineWindow, type ServerWindow } from '../tsdb-window';
import type { BenchRow } from '../types';
import type { RequestBody } from '../workload';
import { median, startBaseline, startFloor } from './limits';

const SUITE = 'influx';

/** A line-protocol server's window and what it really stored of the points it acknowledged. */
interface StoredWindow extends ServerWindow {
  /** Points found by a count after the run ÷ points acknowledged (1 when nothing was lost). */
  readonly storedShare: number;
}

async function measureTsdb(
  ctx: BenchContext,
  start: () => Promise<TsdbProcess>,
  writePath: string,
  bodies: readonly RequestBody[],
  stored: (server: TsdbProcess) => Promise<number>,
): Promise<StoredWindow> {
  const server = await start();
  try {
    const w = await measureLineWindow({
      options: ctx.options,
      server,
      writePath,
      bodies,
      recycle: recycleLines,
      okStatus: 204,
    });
    return { ...w, storedShare: (await stored(server)) / w.acknowledged };
  } finally {
    await server.stop();
  }
}

const influx = (ctx: BenchContext, bodies: readonly RequestBody[]): Promise<StoredWindow> =>
  measureTsdb(ctx, startInfluxd, INFLUX_WRITE_PATH, bodies, influxStoredPoints);
const victoria = (ctx: BenchContext, bodies: readonly RequestBody[]): Promise<StoredWindow> =>
  measureTsdb(ctx, startVictoriaMetrics, VICTORIA_WRITE_PATH, bodies, victoriaStoredPoints);

/** A window of a server that stores into the Sluice schema: its CPU split between it and PostgreSQL. */
interface StoringWindow extends ServerWindow {
  /** Its own process (the collector, or a floor). */
  readonly processCpuSecondsPerMillion: number;
  readonly postgresCpuSecondsPerMillion: number;
  /** The part of `postgresCpuSecondsPerMillion` spent in the collector's scheduled work (rollups, loss map). */
  readonly scheduledCpuSecondsPerMillion: number;
}

/** Sluice's window, with what its defaults do for the points after the window. */
interface SluiceWindow extends StoringWindow {
  /** Events per write transaction, warm-up and window together (the writer's metrics). */
  readonly meanBatchEvents: number;
  /**
   * PostgreSQL CPU of folding every point stored (warm-up and window) into the rollups once,
   * after the window (`measureRollupFold`), per million points.
   */
  readonly foldCpuSecondsPerMillion: number;
  /** (app, name, minute) buckets that fold took. */
  readonly foldBuckets: number;
  /**
   * PostgreSQL CPU of merging every block the points were stored in (warm-up and window) once,
   * after the fold (`measureBlockMerge`), per million points.
   */
  readonly mergeCpuSecondsPerMillion: number;
}

/**
 * A server storing into a fresh Sluice database under the same windows: the warm-up's points
 * stored first, then the window; points are the rows it stored, its time runs until they are all
 * stored, and its CPU is its process and the PostgreSQL backends of its database over that time.
 * `after` reads what else is measured of the run, with the server still up and the rows in place.
 */
async function measureStoring<T>(
  ctx: BenchContext,
  bodies: readonly RequestBody[],
  start: (databaseUrl: string) => Promise<ServiceProcess>,
  after: (databaseUrl: string, server: ServiceProcess, rows: number) => Promise<T>,
): Promise<StoringWindow & T> {
  const db = await ctx.databases.fresh('influx_baseline');
  const server = await start(db.url);
  const counter = new RowCounter(db.url);
  const client = createHttpClient(server.origin, CONNECTIONS);
  try {
    const loop = {
      client,
      path: '/v1/events',
      bodies,
      concurrency: CONNECTIONS,
      recycle: recycleJson,
    };
    const warm = await runClosedLoop({ ...loop, maxMs: ctx.options.tsdbWarmupMs });
    const before = (await counter.waitFor(warm.accepted, ctx.options.storeTimeoutMs)).rows;
    const backends = new PgBackendCpu(db.url);
    await backends.start();
    const cpu0 = server.sample().cpuSeconds;
    const client0 = process.cpuUsage();
    const load = await runClosedLoop({
      ...loop,
      maxMs: ctx.options.tsdbWindowMs,
      firstRequest: warm.nextRequest,
    });
    const clientUsage = process.cpuUsage(client0);
    const reached = await counter.waitFor(before + load.accepted, ctx.options.storeTimeoutMs);
    const serverCpu = server.sample().cpuSeconds - cpu0;
    const pgCpu = await backends.stop();
    const scheduledCpu = backends.byApplication().get('sluice-scheduler') ?? 0;
    const stored = reached.rows - before;
    if (reached.at === null)
      throw new Error(`${server.name} stored ${stored} of ${load.accepted} acknowledged points`);
    const seconds = (reached.at - load.startedAt) / 1000;
    return {
      pointsPerSecond: stored / seconds,
      cpuSecondsPerMillion: ((serverCpu + pgCpu) / stored) * 1e6,
      processCpuSecondsPerMillion: (serverCpu / stored) * 1e6,
      postgresCpuSecondsPerMillion: (pgCpu / stored) * 1e6,
      scheduledCpuSecondsPerMillion: (scheduledCpu / stored) * 1e6,
      points: stored,
      serverCores: (serverCpu + pgCpu) / seconds,
      clientCores: (clientUsage.user + clientUsage.system) / 1e6 / ((load.endedAt - load.startedAt) / 1000),
      acknowledged: warm.accepted + load.accepted,
      ...(await after(db.url, server, reached.rows)),
    };
  } finally {
    await client.close();
    await counter.close();
    await server.stop();
    await ctx.databases.drop(db);
  }
}

/** Sluice tier 2 (defaults, ack queued), then its rollup fold and block merge of the points once. */
function measureSluice(ctx: BenchContext, bodies: readonly RequestBody[]): Promise<SluiceWindow> {
  return measureStoring(
    ctx,
    bodies,
    (databaseUrl) => startCollector({ databaseUrl, ack: 'queued' }),
    async (databaseUrl, collector, rows) => {
      const writer = await writerFigures(collector.origin);
      const fold = await measureRollupFold(databaseUrl, ctx.options.storeTimeoutMs);
      const merge = await measureBlockMerge(databaseUrl, ctx.options.storeTimeoutMs);
      return {
        meanBatchEvents: writer?.meanBatchEvents ?? NaN,
        foldCpuSecondsPerMillion: (fold.cpuSeconds / rows) * 1e6,
        foldBuckets: fold.buckets,
        mergeCpuSecondsPerMillion: (merge.cpuSeconds / rows) * 1e6,
      };
    },
  );
}

/** The single-pass floor (d′, `baselines/single-pass-floor.ts`): scan and blocks COPY, nothing else. */
const measureSinglePassFloor = (ctx: BenchContext, bodies: readonly RequestBody[]): Promise<StoringWindow> =>
  measureStoring(
    ctx,
    bodies,
    (databaseUrl) => startFloor('single-pass', databaseUrl),
    () => Promise.resolve({}),
  );

/** The JSON.parse floor (`baselines/json-parse-http.ts`): a Node.js server that parses and stores nothing. */
async function measureJsonParseFloor(
  ctx: BenchContext,
  bodies: readonly RequestBody[],
): Promise<ServerWindow> {
  const server = await startBaseline('json-parse-http.js', {});
  try {
    return await measureLineWindow({
      options: ctx.options,
      server,
      writePath: '/v1/events',
      bodies,
      recycle: recycleJson,
      okStatus: 202,
      contentType: 'application/json',
    });
  } finally {
    await server.stop();
  }
}

const list = (xs: readonly number[]): string => xs.map((x) => round(x)).join('/');

/** Median rate and CPU of one server's rounds, and the rounds themselves. */
function summary(runs: readonly ServerWindow[]) {
  return {
    rate: median(runs.map((r) => r.pointsPerSecond)),
    cpu: median(runs.map((r) => r.cpuSecondsPerMillion)),
    extra: {
      rounds_points_s: list(runs.map((r) => r.pointsPerSecond)),
      rounds_cpu_s_per_m: list(runs.map((r) => r.cpuSecondsPerMillion)),
      server_cores: round(median(runs.map((r) => r.serverCores))),
      client_cores: round(median(runs.map((r) => r.clientCores))),
      points: round(median(runs.map((r) => r.points))),
    },
  };
}

function storedExtra(runs: readonly StoredWindow[]) {
  return { stored_of_acked: list(runs.map((r) => r.storedShare)) };
}

/** Rate and CPU rows of one baseline. */
function baselineRows(label: string, runs: readonly StoredWindow[]): BenchRow[] {
  const s = summary(runs);
  return [
    figure(SUITE, `${label} points stored`, round(s.rate), 'points/s', { ...s.extra, ...storedExtra(runs) }),
    figure(SUITE, `${label} server CPU per million points`, round(s.cpu), 'CPU-s/M points'),
  ];
}

/** Targets of Sluice against a baseline: its rate at least, its CPU per point at most, × the baseline's. */
interface Targets {
  readonly rateAtLeast?: number;
  readonly cpuAtMost?: number;
}

/**
 * Sluice's rows against one baseline: each ratio is the median of the rounds' paired ratios (both
 * measured in the same round, one after the other).
 */
function sluiceVersus(
  label: string,
  sluice: readonly SluiceWindow[],
  base: readonly ServerWindow[],
  targets: Targets = {},
): BenchRow[] {
  const { rateAtLeast, cpuAtMost } = targets;
  const s = summary(sluice);
  const rateRatios = sluice.map((r, i) => r.pointsPerSecond / (base[i] as ServerWindow).pointsPerSecond);
  const cpuRatios = sluice.map(
    (r, i) => r.cpuSecondsPerMillion / (base[i] as ServerWindow).cpuSecondsPerMillion,
  );
  const rateRatio = median(rateRatios);
  const cpuRatio = median(cpuRatios);
  return [
    {
      ...figure(SUITE, `Sluice tier 2 points stored, vs ${label}`, round(s.rate), 'points/s', {
        ...s.extra,
        rounds_ratio: list(rateRatios),
      }),
      baseline: `${label} points stored`,
      ratio: round(rateRatio),
      ...(rateAtLeast !== undefined && {
        target: `ratio ≥ ${rateAtLeast}`,
        met: rateRatio >= rateAtLeast,
      }),
    },
    {
      ...figure(
        SUITE,
        `Sluice tier 2 server CPU per million points (collector + PostgreSQL backends), vs ${label}`,
        round(s.cpu),
        'CPU-s/M points',
        {
          rounds_ratio: list(cpuRatios),
          collector_cpu_s_per_m: round(median(sluice.map((r) => r.processCpuSecondsPerMillion))),
          postgres_cpu_s_per_m: round(median(sluice.map((r) => r.postgresCpuSecondsPerMillion))),
          postgres_scheduled_cpu_s_per_m: round(median(sluice.map((r) => r.scheduledCpuSecondsPerMillion))),
          batch_events: round(median(sluice.map((r) => r.meanBatchEvents))),
        },
      ),
      baseline: `${label} server CPU per million points`,
      ratio: round(cpuRatio),
      ...(cpuAtMost !== undefined && { target: `ratio ≤ ${cpuAtMost}`, met: cpuRatio <= cpuAtMost }),
    },
    foldRow(label, sluice, base),
  ];
}

/**
 * Sluice's CPU per point with the scheduled work its defaults do for a point beyond storing it,
 * which the window does not see: the rollup fold of each point once (`measureRollupFold`; rollups
 * every 60 s) and the merge of its block once (`measureBlockMerge`; two minutes after its minute).
 * Against the baseline's CPU, which does neither; context, no target.
 */
function foldRow(label: string, sluice: readonly SluiceWindow[], base: readonly ServerWindow[]): BenchRow {
  const withJobs = sluice.map(
    (r) => r.cpuSecondsPerMillion + r.foldCpuSecondsPerMillion + r.mergeCpuSecondsPerMillion,
  );
  const ratios = withJobs.map((cpu, i) => cpu / (base[i] as ServerWindow).cpuSecondsPerMillion);
  return {
    ...figure(
      SUITE,
      `Sluice tier 2 server CPU per million points with their rollup fold and block merge, vs ${label}`,
      round(median(withJobs)),
      'CPU-s/M points',
      {
        rounds_ratio: list(ratios),
        fold_cpu_s_per_m: list(sluice.map((r) => r.foldCpuSecondsPerMillion)),
        fold_buckets: list(sluice.map((r) => r.foldBuckets)),
        merge_cpu_s_per_m: list(sluice.map((r) => r.mergeCpuSecondsPerMillion)),
      },
    ),
    baseline: `${label} server CPU per million points`,
    ratio: round(median(ratios)),
  };
}

/** Median of the paired ratios `of[i] ÷ to[i]` of each round's windows, and the ratios. */
function paired(of: readonly number[], to: readonly number[]): { ratio: number; rounds_ratio: string } {
  const ratios = of.map((x, i) => x / (to[i] as number));
  return { ratio: round(median(ratios)), rounds_ratio: list(ratios) };
}

const rates = (runs: readonly ServerWindow[]): number[] => runs.map((r) => r.pointsPerSecond);
const cpus = (runs: readonly ServerWindow[]): number[] => runs.map((r) => r.cpuSecondsPerMillion);

/**
 * The floors against InfluxDB, and Sluice against the single-pass floor: what any Node.js server
 * of these bodies spends before its own work (the JSON.parse floor: its CPU alone, nothing
 * stored), what a collector built on the single pass spends storing them with nothing else, and
 * how much Sluice's intake, lanes and writer add to that. Context for the targets; none of its own.
 */
function floorRows(schema: Schema, r: SchemaRuns): BenchRow[] {
  const influxCpu = `${schema.influx} server CPU per million points`;
  const parse = summary(r.jsonParseFloor);
  const floor = summary(r.singlePassFloor);
  const sluice = summary(r.sluice);
  const parseCpu = paired(cpus(r.jsonParseFloor), cpus(r.influx));
  const floorRate = paired(rates(r.singlePassFloor), rates(r.influx));
  const floorCpu = paired(cpus(r.singlePassFloor), cpus(r.influx));
  const sluiceCpu = paired(cpus(r.sluice), cpus(r.singlePassFloor));
  return [
    {
      ...figure(
        SUITE,
        `JSON.parse floor (${schema.name}): node:http reading and parsing each body, storing nothing, server CPU per million points`,
        round(parse.cpu),
        'CPU-s/M points',
        {
          points_s: round(parse.rate),
          server_cores: parse.extra.server_cores,
          rounds_ratio: parseCpu.rounds_ratio,
        },
      ),
      baseline: influxCpu,
      ratio: parseCpu.ratio,
    },
    {
      ...figure(SUITE, `single-pass floor (${schema.name}) points stored`, round(floor.rate), 'points/s', {
        ...floor.extra,
        rounds_ratio: floorRate.rounds_ratio,
      }),
      baseline: `${schema.influx} points stored`,
      ratio: floorRate.ratio,
    },
    {
      ...figure(
        SUITE,
        `single-pass floor (${schema.name}) server CPU per million points (floor + PostgreSQL backends)`,
        round(floor.cpu),
        'CPU-s/M points',
        {
          rounds_ratio: floorCpu.rounds_ratio,
          floor_cpu_s_per_m: round(median(r.singlePassFloor.map((w) => w.processCpuSecondsPerMillion))),
          postgres_cpu_s_per_m: round(median(r.singlePassFloor.map((w) => w.postgresCpuSecondsPerMillion))),
        },
      ),
      baseline: influxCpu,
      ratio: floorCpu.ratio,
    },
    {
      ...figure(
        SUITE,
        `Sluice tier 2 server CPU per million points (${schema.name}), vs the single-pass floor`,
        round(sluice.cpu),
        'CPU-s/M points',
        { rounds_ratio: sluiceCpu.rounds_ratio },
      ),
      baseline: `single-pass floor (${schema.name}) server CPU per million points (floor + PostgreSQL backends)`,
      ratio: sluiceCpu.ratio,
    },
  ];
}

/** A schema of the points and the labels of its rows. */
interface Schema {
  /** The schema's name in progress lines. */
  readonly name: string;
  /** Row labels of each baseline with these points. */
  readonly influx: string;
  readonly victoria: string;
  readonly lines: readonly RequestBody[];
  readonly json: readonly RequestBody[];
  /** Sluice's targets against InfluxDB with these points. */
  readonly targets: Targets;
  /** Whether the floors (a JSON.parse server, the single-pass floor) are measured with these points. */
  readonly floors: boolean;
}

/** Windows of one schema, a list per server, a window a round. */
interface SchemaRuns {
  readonly influx: StoredWindow[];
  readonly victoria: StoredWindow[];
  readonly sluice: SluiceWindow[];
  readonly jsonParseFloor: ServerWindow[];
  readonly singlePassFloor: StoringWindow[];
}

/**
 * InfluxDB 1.x and VictoriaMetrics (Debian's `influxd` and `victoria-metrics`, started here on
 * loopback with temporary data folders, each skipped with a row saying so when not installed)
 * against Sluice tier 2: the same metric points, the same load client (100 points a request, 16
 * connections), the same windows (`tsdbWarmupMs` of load, then `tsdbWindowMs` measured), in
 * `tsdbRounds` rounds of one window per server and schema; rows give the medians. Points stored
 * per second and server CPU per million points, read from /proc over the window only: the
 * database's process (every thread), or Sluice's collector and the PostgreSQL backends of its
 * database. The baselines' stored points are counted after each run against what they
 * acknowledged (`stored_of_acked`).
 *
 * Two schemas of the same points, both measured each round. The headline, tags only, is a point
 * as a metrics user writes it: one name (`render_frame_drop`), app, route and browser as tags (144
 * series), the value; Sluice gets the app as the source's and route and browser as attributes.
 * The second carries every attribute Sluice stores: app, env, version and region as tags (144
 * series per name), the value, route, method, host and status as fields. InfluxDB stores each
 * field as its own column; VictoriaMetrics stores numeric fields (value, status) and drops strings.
 */
export async function runInfluxBaseline(ctx: BenchContext): Promise<BenchRow[]> {
  const haveInflux = influxdInstalled();
  const haveVictoria = victoriaMetricsInstalled();
  const rows: BenchRow[] = [];
  if (!haveInflux)
    rows.push(
      figure(SUITE, 'InfluxDB baseline skipped: influxd (Debian package influxdb) not installed', 0, ''),
    );
  if (!haveVictoria)
    rows.push(
      figure(
        SUITE,
        'VictoriaMetrics baseline skipped: victoria-metrics (Debian package victoria-metrics) not installed',
        0,
        '',
      ),
    );
  if (!haveInflux && !haveVictoria) return rows;

  ctx.progress('influx: building point bodies');
  const points = metricPoints(ctx.options.quick ? 20_000 : 200_000, 11);
  const schemas: readonly Schema[] = [
    {
      name: 'tags only',
      influx: 'InfluxDB 1.x (tags only)',
      victoria: 'VictoriaMetrics (tags only)',
      lines: points.tagsLines,
      json: points.tagsJson,
      targets: { rateAtLeast: 1, cpuAtMost: 1 },
      floors: true,
    },
    {
      name: 'every attribute',
      influx: 'InfluxDB 1.x (every attribute)',
      victoria: 'VictoriaMetrics (every attribute; strings dropped)',
      lines: points.lines,
      json: points.json,
      targets: { rateAtLeast: 1.5 },
      floors: false,
    },
  ];
  const runs: SchemaRuns[] = schemas.map(() => ({
    influx: [],
    victoria: [],
    sluice: [],
    jsonParseFloor: [],
    singlePassFloor: [],
  }));
  for (let round = 0; round < ctx.options.tsdbRounds; round++) {
    const of = `round ${round + 1} of ${ctx.options.tsdbRounds}`;
    for (const [i, schema] of schemas.entries()) {
      const r = runs[i] as SchemaRuns;
      if (haveInflux) {
        ctx.progress(`influx: InfluxDB, ${schema.name}, ${of}`);
        r.influx.push(await influx(ctx, schema.lines));
      }
      if (haveVictoria) {
        ctx.progress(`influx: VictoriaMetrics, ${schema.name}, ${of}`);
        r.victoria.push(await victoria(ctx, schema.lines));
      }
      ctx.progress(`influx: Sluice tier 2, ${schema.name}, ${of}`);
      r.sluice.push(await measureSluice(ctx, schema.json));
      if (schema.floors && haveInflux) {
        ctx.progress(`influx: JSON.parse floor, ${schema.name}, ${of}`);
        r.jsonParseFloor.push(await measureJsonParseFloor(ctx, schema.json));
        ctx.progress(`influx: single-pass floor, ${schema.name}, ${of}`);
        r.singlePassFloor.push(await measureSinglePassFloor(ctx, schema.json));
      }
    }
  }

  for (const [i, schema] of schemas.entries()) {
    const r = runs[i] as SchemaRuns;
    if (haveInflux) rows.push(...baselineRows(schema.influx, r.influx));
    if (haveVictoria) rows.push(...baselineRows(schema.victoria, r.victoria));
    if (haveInflux) rows.push(...sluiceVersus(schema.influx, r.sluice, r.influx, schema.targets));
    if (haveVictoria) rows.push(...sluiceVersus(schema.victoria, r.sluice, r.victoria));
    if (schema.floors && haveInflux) rows.push(...floorRows(schema, r));
  }
  const bytes = points.bytesPerPoint;
  rows.push(
    figure(
      SUITE,
      'request bytes per point: JSON / line protocol, tags only and every attribute',
      round(bytes.tagsJson),
      'B',
      {
        tags_lines: round(bytes.tagsLines),
        json: round(bytes.json),
        lines: round(bytes.lines),
      },
    ),
  );
  return rows;
}
