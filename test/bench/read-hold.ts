/**
 * A few minutes' measurement of what reads do to ingest on one collector, outside `npm run bench`:
 * `npm run build && node dist/test/bench/read-hold.js`. It reuses (or loads) the `reads` suite's
 * kept data set, by default of 1 million events (`BENCH_READS_EVENTS`), then prints:
 *
 * - per view (`READ_HOLD_VIEWS=0` skips): the collector's CPU, scavenges and answer size per warm
 *   read, 10 reads one after another;
 * - ingest at a steady 500 events/s alone and while 8 readers loop (reads-ingest.ts), with the
 *   collector's event-loop delay, its collections and the overload gate's refusals in each window;
 * - with `READ_HOLD_SATURATED=1`, ingest at saturation alone and with the readers.
 *
 * `READ_HOLD_WINDOW_MS` sets each ingest window (default 10 s).
 */
import { startCollector } from './collector-process';
import { readKept, recordKept, recreate, staleReason, urlOf } from './kept-database';
import { LoopWindow } from './read-loop-figures';
import { quantile, timeRead } from './read-timing';
import { readViews, type ReadView } from './read-views';
import { paced, saturated } from './reads-ingest';
import { datasetDatabaseName, readsDataset } from './reads-dataset';
import { loadDataset, READS_RETENTION_DAYS } from './reads-load';
import { sampleProcess } from './proc-stats';
import { figure, round } from './rows';
import type { ServiceProcess } from './service-process';
import { formatTable } from './table';
import type { BenchRow } from './types';

const SUITE = 'read-hold';
const ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PROFILE_READS = 10;

const progress = (message: string): void => {
  process.stderr.write(`[read-hold ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
};

async function dataset(): Promise<{ url: string; endMs: number; days: number }> {
  const given = Number(process.env.BENCH_READS_EVENTS ?? 1_000_000);
  const d = readsDataset({ BENCH_READS_EVENTS: String(given) }, false);
  const name = datasetDatabaseName(d);
  const url = urlOf(ADMIN_URL, name);
  const found = await readKept(ADMIN_URL, name);
  const stale = staleReason(found, d.events, d.seed, Date.now());
  if (found !== null && stale === null) return { url, endMs: found.endMs, days: d.days };
  progress(`loading ${d.events} events into ${name} (${stale})`);
  await recreate(ADMIN_URL, name);
  const endMs = Math.floor(Date.now() / 60_000) * 60_000;
  const t0 = performance.now();
  await loadDataset(url, d, endMs, 3_600_000, progress);
  const kept = { events: d.events, seed: d.seed, endMs, loadSeconds: (performance.now() - t0) / 1000 };
  await recordKept(url, kept);
  return { url, endMs, days: d.days };
}

/** Per view: collector CPU, scavenges and bytes per warm read. */
async function profileViews(collector: ServiceProcess, views: readonly ReadView[]): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const v of views) {
    for (let i = 0; i < 2; i++) await timeRead(collector.origin, v.path);
    const loop = new LoopWindow(collector.origin);
    await loop.start();
    const cpu0 = sampleProcess(collector.pid).cpuSeconds;
    const times: number[] = [];
    let bytes = 0;
    for (let i = 0; i < PROFILE_READS; i++) {
      const t = await timeRead(collector.origin, v.path);
      times.push(t.ms);
      bytes = t.bytes;
    }
    const cpuMs = ((sampleProcess(collector.pid).cpuSeconds - cpu0) * 1000) / PROFILE_READS;
    const f = (await loop.stop()).loop;
    rows.push(
      figure(SUITE, `view: ${v.name}`, round(cpuMs), 'collector CPU ms/read', {
        p50_ms: round(quantile(times, 0.5)),
        answer_kib: round(bytes / 1024),
        scavenges_per_read: round(f.scavenges / PROFILE_READS),
        scavenge_mean_ms: f.scavenge_mean_ms,
        loop_delay_max_ms: f.loop_delay_max_ms,
      }),
    );
  }
  return rows;
}

async function main(): Promise<void> {
  const { url, endMs, days } = await dataset();
  const views = readViews(endMs, days);
  const windowMs = Number(process.env.READ_HOLD_WINDOW_MS ?? 10_000);
  const collector = await startCollector({
    databaseUrl: url,
    ack: 'queued',
    extraEnv: { SLUICE_RETENTION_RAW: `${READS_RETENTION_DAYS}d` },
  });
  const rows: BenchRow[] = [];
  try {
    if (process.env.READ_HOLD_VIEWS !== '0') rows.push(...(await profileViews(collector, views)));
    const o = {
      suite: SUITE,
      label: 'read-hold',
      windowMs,
      windowEvents: 400_000,
      rounds: 1,
      progress,
    };
    rows.push(...(await paced(collector, url, views, o)));
    if (process.env.READ_HOLD_SATURATED === '1') rows.push(...(await saturated(collector, url, views, o)));
  } finally {
    await collector.stop();
  }
  process.stdout.write(`${formatTable(rows)}\n`);
  process.stdout.write(`${JSON.stringify(rows)}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
