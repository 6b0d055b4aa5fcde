import path from 'node:path';
import { rawCopy, sluiceCopyChunks } from '../baselines/raw-copy';
import type { CopyChunk, CopyRunResult } from '../copy-run';
import { cleanEnv, collectorNodeArgs } from '../collector-process';
import type { BenchContext } from '../context';
import { freePort } from '../../../src/dev-cluster/free-port';
import { CORE_SETTINGS } from '../../../src/config/core-settings';
import { createHttpClient } from '../http-client';
import { runClosedLoop } from '../load-closed';
import { ratePerSecond, statusCount, type LoadResult } from '../load-result';
import { RowCounter } from '../pg-bench-db';
import { figure, round } from '../rows';
import { startService, type ServiceProcess } from '../service-process';
import { telemetryEvents } from '../telemetry-events';
import type { BenchRow } from '../types';

const SUITE = 'limits';
const BASELINES = path.resolve(__dirname, '..', 'baselines');
/**
 * Events per COPY transaction of baseline (a): the collector's default batch size, so that the
 * ratio measures what the collector adds (HTTP, parsing, validation, encoding, the pipeline), not
 * a difference in transaction size.
 */
export const RAW_COPY_EVENTS_PER_TRANSACTION = Number(CORE_SETTINGS.batchSize.default);
/** Concurrency of the 100-event baseline runs. */
const BATCH_CONCURRENCY = 8;
/** Seed of the storage runs' events: the same mix as the HTTP corpus, other ids. */
export const STORAGE_SEED = 7;

/** Starts a baseline script of `baselines/` as a process of its own on a free port. */
export async function startBaseline(
  script: string,
  env: NodeJS.ProcessEnv,
  nodeArgs?: readonly string[],
): Promise<ServiceProcess> {
  const port = await freePort();
  return startService({
    name: script,
    script: path.join(BASELINES, script),
    env: { ...cleanEnv(), ...env, BENCH_PORT: String(port) },
    port,
    ...(nodeArgs !== undefined && { nodeArgs }),
  });
}

/** The floor baselines: (d) parses with `JSON.parse`, (d′) with the collector's single pass. */
export type FloorBaseline = 'parse-copy' | 'single-pass';

/**
 * Starts a floor baseline (`baselines/parse-copy-floor.ts`, `single-pass-floor.ts`) on
 * `databaseUrl`: batches as large as the collector's (and raw COPY's), and the node flags of a
 * bench collector.
 */
export function startFloor(floor: FloorBaseline, databaseUrl: string): Promise<ServiceProcess> {
  return startBaseline(
    `${floor}-floor.js`,
    { BENCH_DATABASE_URL: databaseUrl, BENCH_FLOOR_BATCH: String(RAW_COPY_EVENTS_PER_TRANSACTION) },
    collectorNodeArgs(),
  );
}

function latencyExtra(r: LoadResult): Record<string, number> {
  return { p50_ms: round(r.latency.p50), p99_ms: round(r.latency.p99), requests: r.requests };
}

/** The COPY payloads of baseline (a), built once: the workload's rows as the collector maps them. */
export function rawCopyChunks(ctx: BenchContext): CopyChunk[] {
  return sluiceCopyChunks(
    telemetryEvents(ctx.options.copyEvents, STORAGE_SEED),
    RAW_COPY_EVENTS_PER_TRANSACTION,
  );
}

/** One run of baseline (a), into a fresh database. */
export async function measureRawCopy(
  ctx: BenchContext,
  chunks: readonly CopyChunk[],
): Promise<CopyRunResult> {
  const db = await ctx.databases.fresh('raw_copy');
  try {
    ctx.progress(`(a) raw COPY, ${chunks.length} transactions of ${RAW_COPY_EVENTS_PER_TRANSACTION} events`);
    return await rawCopy(db.url, chunks, ctx.options.copyMaxMs);
  } finally {
    await ctx.databases.drop(db);
  }
}

/** The median of `values` (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * Row (a), the storage limit: the median of its runs, taken at different moments of the bench
 * (the rows compared with it pair each of their runs with the raw COPY run next to it).
 */
export function rawCopyRow(runs: readonly CopyRunResult[]): BenchRow {
  return figure(SUITE, '(a) raw COPY, local client', median(runs.map((r) => r.eventsPerSecond)), 'events/s', {
    events_per_run: Math.max(...runs.map((r) => r.events)),
    events_per_tx: RAW_COPY_EVENTS_PER_TRANSACTION,
    runs_events_s: runs.map((r) => Math.round(r.eventsPerSecond)).join('/'),
  });
}

/** The null handlers of baseline (b): a framework's cost is the gap between them. */
export type NullHandler = 'express' | 'node-http';

const NULL_HANDLERS: Record<NullHandler, { readonly script: string; readonly label: string }> = {
  express: { script: 'null-express.js', label: '(b) null Express' },
  'node-http': { script: 'null-node-http.js', label: '(b) bare node:http null handler' },
};

/**
 * (b) the HTTP limit: a handler answering 202 without work, with 1-event requests (req/s) or
 * 100-event requests (events/s). Bodies are sent again in a cycle: nothing is stored. `handler`:
 * Express (the framework the collector is built on) or bare `node:http` (the platform).
 */
export async function measureNullHandler(
  ctx: BenchContext,
  handler: NullHandler,
  perRequest: 1 | 100,
): Promise<BenchRow> {
  const { script, label } = NULL_HANDLERS[handler];
  const server = await startBaseline(script, {});
  try {
    const single = perRequest === 1;
    const concurrency = single ? ctx.options.singleEventConcurrency : BATCH_CONCURRENCY;
    const bodies = single ? ctx.singles.bodies : ctx.batches.bodies;
    const client = createHttpClient(server.origin, concurrency);
    await runClosedLoop({ client, path: '/v1/events', bodies, concurrency, maxMs: 500 });
    ctx.progress(`${label}, ${perRequest}-event requests, concurrency ${concurrency}`);
    const cpu0 = server.sample().cpuSeconds;
    const r = await runClosedLoop({
      client,
      path: '/v1/events',
      bodies,
      maxRequests: 5_000_000,
      concurrency,
      maxMs: ctx.options.baselineMs,
    });
    const cpu1 = server.sample().cpuSeconds;
    await client.close();
    const answered = statusCount(r, 202);
    const extra = {
      ...latencyExtra(r),
      concurrency,
      cpu_us_per_request: Math.round(((cpu1 - cpu0) / Math.max(1, r.requests)) * 1e6),
    };
    return single
      ? figure(SUITE, `${label}, 1-event requests`, ratePerSecond(r, answered), 'req/s', extra)
      : figure(SUITE, `${label}, 100-event requests`, ratePerSecond(r, answered * 100), 'events/s', extra);
  } finally {
    await server.stop();
  }
}

/** (c) what a user would write: Express + express.json() + one INSERT per event. */
export async function measureNaive(ctx: BenchContext): Promise<BenchRow> {
  const db = await ctx.databases.fresh('naive');
  const server = await startBaseline('naive-express.js', { BENCH_DATABASE_URL: db.url });
  const counter = new RowCounter(db.url);
  try {
    const client = createHttpClient(server.origin, BATCH_CONCURRENCY);
    ctx.progress(`(c) naive Express, one INSERT per event, concurrency ${BATCH_CONCURRENCY}`);
    const r = await runClosedLoop({
      client,
      path: '/v1/events',
      bodies: ctx.batches.bodies,
      concurrency: BATCH_CONCURRENCY,
      maxMs: ctx.options.baselineMs,
    });
    await client.close();
    // Every 202 was sent after its INSERTs: the rows are there when the loop ends.
    const rows = await counter.count();
    return figure(SUITE, '(c) naive Express, INSERT per event', ratePerSecond(r, rows), 'events/s', {
      ...latencyExtra(r),
      concurrency: BATCH_CONCURRENCY,
      rows,
      acknowledged: r.accepted,
      not_202: r.requests - statusCount(r, 202),
    });
  } finally {
    await counter.close();
    await server.stop();
    await ctx.databases.drop(db);
  }
}
