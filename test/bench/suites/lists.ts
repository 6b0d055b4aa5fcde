/**
 * The lists of the read API at the size a client inventing names reaches (issue: 100,000 apps and
 * 100,000 metric names made `GET /v1/apps` and `GET /v1/metrics/names` answer 503 after 5 s, every
 * time): each app has one metric of its own and one shared by every app, and one log event. Each
 * read is timed over a few rounds against a collector with default read settings, on PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { TelemetryEvent } from '../../../src/events/types';
import { foldInvalidatedBuckets } from '../../../src/storage/postgres/rollups';
import { writeEvents } from '../../support/storage';
import { startCollector } from '../collector-process';
import type { BenchContext } from '../context';
import { benchStorage } from '../pg-bench-db';
import { bounded, figure, round } from '../rows';
import type { BenchRow } from '../types';

const SUITE = 'lists';
const APPS = Number(process.env.BENCH_LIST_APPS ?? 100_000);
const WRITE_CHUNK = 6000;
const ROUNDS = 5;
const FOLD_ENTRIES = 100_000;
/** The console's target: a view usable within a second (docs/console.md, "How fast it is"). */
const WITHIN_MS = 1000;

const appName = (i: number): string => `app-${String(i).padStart(6, '0')}`;

function eventsOf(i: number, now: number): TelemetryEvent[] {
  const app = appName(i);
  const base = { app, version: null, env: null, summary: null, error: null, message: null, attributes: {} };
  const ts = now - 30 * 60_000 + (i % 1800) * 1000;
  return [
    { ...base, id: randomUUID(), type: 'metric', name: `m.${app}`, ts, value: i % 97 },
    { ...base, id: randomUUID(), type: 'metric', name: 'shared.metric', ts, value: 1 },
    { ...base, id: randomUUID(), type: 'log', name: 'app.log', ts, value: null, message: 'hello' },
  ] as TelemetryEvent[];
}

async function fill(url: string, now: number): Promise<void> {
  const storage = benchStorage(url, 'copy');
  try {
    let batch: TelemetryEvent[] = [];
    for (let i = 0; i < APPS; i++) {
      batch.push(...eventsOf(i, now));
      if (batch.length >= WRITE_CHUNK) {
        await writeEvents(storage, batch);
        batch = [];
      }
    }
    if (batch.length > 0) await writeEvents(storage, batch);
  } finally {
    await storage.close();
  }
}

async function foldAll(url: string, now: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (;;) {
      await client.query('BEGIN');
      const r = await foldInvalidatedBuckets(client, FOLD_ENTRIES, now - 3 * 86_400_000);
      await client.query('COMMIT');
      if (r.entries < FOLD_ENTRIES) break;
    }
    await client.query('VACUUM ANALYZE');
  } finally {
    await client.end();
  }
}

interface Timed {
  readonly medianMs: number;
  readonly slowestMs: number;
  readonly status: number;
  readonly body: Record<string, unknown> | null;
}

async function timeRead(origin: string, path: string): Promise<Timed> {
  const times: number[] = [];
  let status = 0;
  let body: Record<string, unknown> | null = null;
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now();
    const res = await fetch(`${origin}${path}`);
    const text = await res.text();
    times.push(performance.now() - started);
    status = res.status;
    body = JSON.parse(text) as Record<string, unknown>;
  }
  times.sort((a, b) => a - b);
  return {
    medianMs: times[Math.floor(times.length / 2)] as number,
    slowestMs: times[times.length - 1] as number,
    status,
    body,
  };
}

export async function runListsBench(ctx: BenchContext): Promise<BenchRow[]> {
  const db = await ctx.databases.fresh('lists');
  const now = Date.now();
  ctx.progress(`lists: writing ${APPS} apps, each with a metric of its own, a shared one and a log event`);
  await fill(db.url, now);
  ctx.progress('lists: folding rollups');
  await foldAll(db.url, now);
  const collector = await startCollector({ databaseUrl: db.url, ack: 'queued' });
  const rows: BenchRow[] = [figure(SUITE, 'apps (each with 2 metric series and 1 log event)', APPS, 'apps')];
  try {
    const first = await timeRead(collector.origin, '/v1/apps?limit=100');
    const cursor = typeof first.body?.next_cursor === 'string' ? first.body.next_cursor : null;
    const reads: Array<[string, string]> = [
      ['GET /v1/apps, first page', '/v1/apps'],
      ['GET /v1/apps, the page after a cursor', `/v1/apps?limit=100${cursor ? `&cursor=${cursor}` : ''}`],
      ['GET /v1/apps, search by prefix', `/v1/apps?prefix=${appName(Math.floor(APPS / 2)).slice(0, -2)}`],
      ['GET /v1/metrics/names, first page', '/v1/metrics/names'],
      ['GET /v1/metrics/names, search by prefix', `/v1/metrics/names?prefix=m.${appName(777).slice(0, -1)}`],
      ['GET /v1/metrics/names of one app', `/v1/metrics/names?app=${appName(4242)}`],
    ];
    for (const [name, path] of reads) {
      ctx.progress(`lists: ${name}`);
      const t = await timeRead(collector.origin, path);
      const listed = (t.body?.apps ?? t.body?.names ?? []) as unknown[];
      rows.push(
        bounded(
          SUITE,
          `${name}, ${APPS} apps and ${APPS + 1} metric names`,
          round(t.medianMs),
          'ms',
          `200 within ${WITHIN_MS} ms`,
          t.status === 200 && t.slowestMs <= WITHIN_MS,
          {
            status: t.status,
            median_ms: round(t.medianMs),
            slowest_ms: round(t.slowestMs),
            listed: listed.length,
            next_cursor: t.body?.next_cursor ? 'yes' : 'no',
            error: String(t.body?.error ?? ''),
          },
        ),
      );
    }
  } finally {
    await collector.stop();
    await ctx.databases.drop(db);
  }
  return rows;
}
