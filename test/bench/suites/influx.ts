import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../../src/cluster/free-port';
import { startCollector } from '../collector-process';
import type { BenchContext } from '../context';
import { createHttpClient } from '../http-client';
import { runClosedLoop } from '../load-closed';
import { statusCount } from '../load-result';
import { PgBackendCpu } from '../pg-backend-cpu';
import { RowCounter } from '../pg-bench-db';
import { sampleProcess } from '../proc-stats';
import { figure, round } from '../rows';
import type { BenchRow } from '../types';
import { EventGenerator, type RequestBody, type WireEvent } from '../workload';

const SUITE = 'influx';
/** The load shape of both servers: 100 points a request, 16 connections, one load client. */
const POINTS_PER_REQUEST = 100;
const CONNECTIONS = 16;
const INFLUXD = '/usr/bin/influxd';
const WARMUP_REQUESTS = 100;

/** The same metric points as Sluice events (JSON) and as InfluxDB line protocol. */
interface PointBodies {
  readonly json: RequestBody[];
  readonly lines: RequestBody[];
  readonly warmJson: RequestBody[];
  readonly warmLines: RequestBody[];
}

/** Line protocol escapes of a tag key or value (commas, spaces, equals signs). */
function tag(s: string): string {
  return s.replace(/[,= ]/g, (c) => `\\${c}`);
}

/** Attributes written as tags: bounded sets, as an InfluxDB schema keeps its tags. */
const TAG_ATTRIBUTES = new Set(['region']);

/** A string field's value in line protocol: quoted, with `"` and `\` escaped. */
function stringField(s: string): string {
  return `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * One point: the metric name as measurement; app, env, version and the region as tags (144 series
 * per name, as a metrics user keys them); the value, the other attributes (route, method, host,
 * status) as fields; a nanosecond time unique per point (a point of the same series and time would
 * overwrite another in InfluxDB, where Sluice stores each event). With every string attribute a
 * tag, nearly each point would create a series of its own: InfluxDB's index, not its write path.
 */
function line(e: WireEvent, unique: number): string {
  const tags = [`app=${tag(e.source.app)}`, `env=${tag(e.source.env)}`, `version=${tag(e.source.version)}`];
  const fields = [`value=${e.value ?? 0}`];
  for (const [k, v] of Object.entries(e.attributes).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (typeof v === 'string' && TAG_ATTRIBUTES.has(k)) tags.push(`${tag(k)}=${tag(v)}`);
    else if (typeof v === 'string') fields.push(`${tag(k)}=${stringField(v)}`);
    else if (typeof v === 'number') fields.push(`${tag(k)}=${v}`);
  }
  return `${tag(e.name)},${tags.join(',')} ${fields.join(',')} ${BigInt(e.ts) * 1_000_000n + BigInt(unique % 1_000_000)}`;
}

function pointBodies(points: number, seed: number): { json: RequestBody[]; lines: RequestBody[] } {
  const generator = new EventGenerator(seed);
  const now = Date.now();
  const json: RequestBody[] = [];
  const lines: RequestBody[] = [];
  let unique = 0;
  for (let n = 0; n < points; n += POINTS_PER_REQUEST) {
    const events: WireEvent[] = [];
    while (events.length < POINTS_PER_REQUEST) {
      const e = generator.next(now);
      if (e.type === 'metric') events.push(e);
    }
    json.push({ bytes: Buffer.from(JSON.stringify({ events })), events: events.length });
    lines.push({
      bytes: Buffer.from(events.map((e) => line(e, unique++)).join('\n')),
      events: events.length,
    });
  }
  return { json, lines };
}

function influxConfig(dir: string, httpPort: number, rpcPort: number): string {
  return `reporting-enabled = false
bind-address = "127.0.0.1:${rpcPort}"
[meta]
  dir = "${dir}/meta"
[data]
  dir = "${dir}/data"
  wal-dir = "${dir}/wal"
  query-log-enabled = false
[monitor]
  store-enabled = false
[http]
  bind-address = "127.0.0.1:${httpPort}"
  log-enabled = false
[ifql]
  enabled = false
[continuous_queries]
  enabled = false
[logging]
  level = "warn"
`;
}

function httpStatus(port: number, method: string, pathAndQuery: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, method, path: pathAndQuery, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}

interface Influx {
  readonly pid: number;
  readonly port: number;
  stop(): Promise<void>;
}

/** `influxd` on loopback, free ports, a temporary data folder; ready once `/ping` answers 204. */
async function startInflux(): Promise<Influx> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-influx-'));
  const port = await freePort();
  const rpc = await freePort();
  const config = path.join(dir, 'influxdb.conf');
  writeFileSync(config, influxConfig(dir, port, rpc));
  const child: ChildProcess = spawn(INFLUXD, ['-config', config], { stdio: 'ignore' });
  const stop = async (): Promise<void> => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = performance.now() + 30_000;
  while ((await httpStatus(port, 'GET', '/ping')) !== 204) {
    if (child.exitCode !== null || performance.now() > deadline) {
      await stop();
      throw new Error('influxd did not start');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  if ((await httpStatus(port, 'POST', '/query?q=CREATE%20DATABASE%20bench')) !== 200) {
    await stop();
    throw new Error('influxd: CREATE DATABASE failed');
  }
  return { pid: child.pid as number, port, stop };
}

interface ServerRun {
  readonly pointsPerSecond: number;
  readonly cpuSecondsPerMillion: number;
  readonly points: number;
}

async function measureInflux(ctx: BenchContext, bodies: PointBodies): Promise<ServerRun> {
  const influx = await startInflux();
  try {
    const origin = `http://127.0.0.1:${influx.port}`;
    const client = createHttpClient(origin, CONNECTIONS, 'text/plain');
    const path = '/write?db=bench&precision=ns';
    await runClosedLoop({ client, path, bodies: bodies.warmLines, concurrency: CONNECTIONS, maxMs: 1500 });
    const cpu0 = sampleProcess(influx.pid).cpuSeconds;
    const load = await runClosedLoop({
      client,
      path,
      bodies: bodies.lines,
      concurrency: CONNECTIONS,
      maxMs: ctx.options.closedMs,
    });
    const cpu = sampleProcess(influx.pid).cpuSeconds - cpu0;
    await client.close();
    // 204: the points are in InfluxDB's write-ahead log (its durable acknowledgement).
    const points = statusCount(load, 204) * POINTS_PER_REQUEST;
    const seconds = (load.endedAt - load.startedAt) / 1000;
    return { pointsPerSecond: points / seconds, cpuSecondsPerMillion: (cpu / points) * 1e6, points };
  } finally {
    await influx.stop();
  }
}

/** Sluice tier 2 (defaults, ack queued): stored rows counted, CPU of the collector and of PostgreSQL's backends. */
async function measureSluice(ctx: BenchContext, bodies: PointBodies): Promise<ServerRun> {
  const db = await ctx.databases.fresh('influx_baseline');
  const collector = await startCollector({ databaseUrl: db.url, ack: 'queued' });
  const counter = new RowCounter(db.url);
  try {
    const client = createHttpClient(collector.origin, CONNECTIONS);
    const warm = await runClosedLoop({
      client,
      path: '/v1/events',
      bodies: bodies.warmJson,
      concurrency: CONNECTIONS,
      maxMs: 1500,
    });
    const before = (await counter.waitFor(warm.accepted, ctx.options.storeTimeoutMs)).rows;
    const backends = new PgBackendCpu(db.url);
    await backends.start();
    const cpu0 = collector.sample().cpuSeconds;
    const load = await runClosedLoop({
      client,
      path: '/v1/events',
      bodies: bodies.json,
      concurrency: CONNECTIONS,
      maxMs: ctx.options.closedMs,
    });
    const reached = await counter.waitFor(before + load.accepted, ctx.options.storeTimeoutMs);
    const collectorCpu = collector.sample().cpuSeconds - cpu0;
    const pgCpu = await backends.stop();
    await client.close();
    const points = reached.rows - before;
    const seconds = ((reached.at ?? performance.now()) - load.startedAt) / 1000;
    return {
      pointsPerSecond: points / seconds,
      cpuSecondsPerMillion: ((collectorCpu + pgCpu) / points) * 1e6,
      points,
    };
  } finally {
    await counter.close();
    await collector.stop();
    await ctx.databases.drop(db);
  }
}

/**
 * InfluxDB 1.x (Debian's `influxd`, started here on loopback with a temporary data folder) against
 * Sluice tier 2 on the same metric points and the same load client, one after the other: points
 * stored per second and server CPU per million points (InfluxDB's process; Sluice's collector and
 * the PostgreSQL backends of its database, both read from /proc). Skipped, with a row saying so,
 * when `influxd` is not installed.
 */
export async function runInfluxBaseline(ctx: BenchContext): Promise<BenchRow[]> {
  if (spawnSync(INFLUXD, ['version']).status !== 0) {
    return [
      figure(SUITE, 'InfluxDB baseline skipped: influxd (Debian package influxdb) not installed', 0, ''),
    ];
  }
  ctx.progress('influx: building point bodies');
  const points = ctx.options.quick ? 60_000 : 400_000;
  const main = pointBodies(points, 11);
  const warm = pointBodies(WARMUP_REQUESTS * POINTS_PER_REQUEST, 12);
  const bodies: PointBodies = { ...main, warmJson: warm.json, warmLines: warm.lines };
  ctx.progress('influx: InfluxDB');
  const influx = await measureInflux(ctx, bodies);
  ctx.progress('influx: Sluice tier 2');
  const sluice = await measureSluice(ctx, bodies);
  const influxRate = 'InfluxDB 1.x points stored (line protocol)';
  const influxCpu = 'InfluxDB 1.x server CPU per million points';
  return [
    figure(SUITE, influxRate, round(influx.pointsPerSecond), 'points/s', { points: influx.points }),
    figure(SUITE, influxCpu, round(influx.cpuSecondsPerMillion), 'CPU-s/M points'),
    {
      ...figure(
        SUITE,
        'Sluice tier 2 points stored (metric events)',
        round(sluice.pointsPerSecond),
        'points/s',
        {
          points: sluice.points,
        },
      ),
      baseline: influxRate,
      ratio: round(sluice.pointsPerSecond / influx.pointsPerSecond),
      target: 'ratio ≥ 1',
      met: sluice.pointsPerSecond >= influx.pointsPerSecond,
    },
    {
      ...figure(
        SUITE,
        'Sluice tier 2 server CPU per million points (collector + PostgreSQL backends)',
        round(sluice.cpuSecondsPerMillion),
        'CPU-s/M points',
      ),
      baseline: influxCpu,
      ratio: round(sluice.cpuSecondsPerMillion / influx.cpuSecondsPerMillion),
      target: 'ratio ≤ 1',
      met: sluice.cpuSecondsPerMillion <= influx.cpuSecondsPerMillion,
    },
  ];
}
