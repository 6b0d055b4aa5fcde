/**
 * The console on a collector holding a million events: how long after opening each view it is
 * usable (its data drawn), in Debian's Chromium, each round in a new browser context (cold cache:
 * the page, its script and its style are downloaded as on a first visit).
 */
import pg from 'pg';
import type { Browser } from 'playwright-core';
import { foldInvalidatedBuckets } from '../../../src/storage/postgres/rollups';
import { launchChromium } from '../../support/chromium';
import { appHour } from '../../support/console-data';
import { writeEvents } from '../../support/storage';
import { startCollector } from '../collector-process';
import type { BenchContext } from '../context';
import { mergeAllBlocks } from '../merged-blocks';
import { benchStorage } from '../pg-bench-db';
import { bounded, figure, round } from '../rows';
import type { BenchRow } from '../types';

const SUITE = 'console';
const APPS = 10;
const HOURS = 24;
/** One event every 864 ms per app: 100,000 events per app over 24 hours, 1,000,000 in all. */
const STEP_MS = 864;
const ROUNDS = 3;
const USABLE_WITHIN_MS = 1000;
const FOLD_ENTRIES = 100_000;

/** Each view the console has, opened by its address, and what is on screen once its data is drawn. */
const VIEWS: ReadonlyArray<{ readonly name: string; readonly hash: string; readonly ready: string }> = [
  { name: 'pipeline', hash: '#/pipeline', ready: '[data-figure="accepted"]' },
  { name: 'events of an app', hash: '#/events?app=app-3', ready: 'table.events tbody tr' },
  {
    name: 'events, filtered by type, env and text',
    hash: '#/events?app=app-3&type=error&env=prod&text=declined',
    ready: 'table.events tbody tr',
  },
  { name: 'error groups of an app', hash: '#/events?app=app-3', ready: '.groups tbody tr' },
  {
    name: 'metric chart, 1m over 24 h',
    hash: '#/metrics?app=app-3&name=http.latency_ms&resolution=1m&stat=avg&range=24h',
    ready: 'table.points tbody tr',
  },
  {
    name: 'metric chart, raw over 1 h',
    hash: '#/metrics?app=app-3&name=http.latency_ms&resolution=raw&stat=avg&range=1h',
    ready: 'table.points tbody tr',
  },
];

/** A million events of 10 apps over the last 24 hours, written as the collector's writer writes them. */
async function fill(url: string, now: number): Promise<number> {
  const storage = benchStorage(url, 'copy');
  let written = 0;
  try {
    for (let app = 0; app < APPS; app++) {
      for (let hour = 0; hour < HOURS; hour++) {
        const events = appHour(`app-${app}`, now - hour * 3_600_000, STEP_MS, app * HOURS + hour + 1);
        await writeEvents(storage, events);
        written += events.length;
      }
    }
  } finally {
    await storage.close();
  }
  return written;
}

/** Folds every rollup bucket the fill invalidated (what the downsample job does over its runs). */
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

async function timeView(browser: Browser, url: string, hash: string, ready: string): Promise<number> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    const page = await context.newPage();
    const started = performance.now();
    await page.goto(`${url}/${hash}`);
    await page.waitForSelector(ready, { state: 'attached', timeout: 30_000 });
    return performance.now() - started;
  } finally {
    await context.close();
  }
}

export async function runConsoleBench(ctx: BenchContext): Promise<BenchRow[]> {
  const db = await ctx.databases.fresh('console');
  const now = Date.now();
  ctx.progress('console: writing a million events of 10 apps over 24 hours');
  const events = await fill(db.url, now);
  ctx.progress('console: folding rollups');
  await foldAll(db.url, now);
  await mergeAllBlocks(db.url, (m) => ctx.progress(`console: ${m}`));
  const collector = await startCollector({ databaseUrl: db.url, ack: 'queued' });
  const browser = await launchChromium();
  const rows: BenchRow[] = [figure(SUITE, 'events held by the collector (PostgreSQL)', events, 'events')];
  try {
    // One visit first, so the first round does not pay PostgreSQL's cold buffers alone.
    for (const v of VIEWS) await timeView(browser, collector.origin, v.hash, v.ready);
    for (const v of VIEWS) {
      const times: number[] = [];
      for (let i = 0; i < ROUNDS; i++) times.push(await timeView(browser, collector.origin, v.hash, v.ready));
      times.sort((a, b) => a - b);
      const median = times[Math.floor(times.length / 2)] as number;
      const slowest = times[times.length - 1] as number;
      rows.push(
        bounded(
          SUITE,
          `console view usable after opening, 1M events: ${v.name}`,
          round(median),
          'ms',
          `≤ ${USABLE_WITHIN_MS} ms`,
          slowest <= USABLE_WITHIN_MS,
          { median_ms: round(median), slowest_ms: round(slowest), rounds: ROUNDS },
        ),
      );
    }
  } finally {
    await browser.close();
    await collector.stop();
    await ctx.databases.drop(db);
  }
  return rows;
}
