/**
 * Storage scaling: the read API and the console's views on a collector holding 10 million events
 * of 10 apps over 7 days (`BENCH_READS_EVENTS` sets another size, e.g. 50000000), in a database
 * kept between runs (kept-database.ts). Each view is timed cold (a restarted collector, the
 * kernel's page cache dropped before each read) and warm, p50 and p95, with the CPU PostgreSQL's
 * backends spend on it; then ingest alone against ingest while 8 readers loop over the views
 * (reads-ingest.ts). Then the same with the collector's reads on a streaming-replication standby
 * of a primary holding the data set (reads-standby.ts; `BENCH_READS_STANDBY=0` leaves it out).
 */
import type { BenchContext } from '../context';
import { PgBackendCpu } from '../pg-backend-cpu';
import { storedBytes } from '../pg-bench-db';
import { readsCollector } from '../reads-collector';
import { readsDataset, readsSuiteName, type ReadsDataset } from '../reads-dataset';
import { datasetDatabase } from '../reads-kept-load';
import { standbyRows, standbyRowsWanted } from '../reads-standby';
import { dropOsCache, quantile, timeRead, type TimedRead } from '../read-timing';
import { readViews, type ReadView } from '../read-views';
import { ingestUnderReads } from '../reads-ingest';
import { bounded, figure, round } from '../rows';
import type { ServiceProcess } from '../service-process';
import type { BenchRow } from '../types';

const WARM_P95_MS = 1000;
const COLD_P95_MS = 2000;
/** Text search's target over 24 h of one app (and the cold target of every read). */
const TEXT_P95_MS = 2000;

interface Plan {
  readonly coldRounds: number;
  readonly warmRounds: number;
  /** Each ingest window: time bound (milliseconds) and count bound (events). */
  readonly ingestMs: number;
  readonly ingestEvents: number;
  /** Alternating rounds of ingest alone and ingest with readers. */
  readonly ingestRounds: number;
  /** Longest the load may write (milliseconds): an hour per 10 million events, at least an hour. */
  readonly loadMaxMs: number;
}

function planOf(quick: boolean, d: ReadsDataset): Plan {
  return quick
    ? {
        coldRounds: 1,
        warmRounds: 3,
        ingestMs: 2_000,
        ingestEvents: 60_000,
        ingestRounds: 1,
        loadMaxMs: 300_000,
      }
    : {
        coldRounds: 3,
        warmRounds: 20,
        ingestMs: 10_000,
        ingestEvents: 400_000,
        ingestRounds: 2,
        loadMaxMs: 3_600_000 * Math.max(1, d.events / 10_000_000),
      };
}

/** Cold reads: per round a restarted collector; the page cache dropped before each read. */
async function coldReads(
  url: string,
  views: readonly ReadView[],
  rounds: number,
): Promise<{ times: Map<string, TimedRead[]>; cacheDropped: boolean }> {
  const times = new Map<string, TimedRead[]>(views.map((v) => [v.name, []]));
  let cacheDropped = true;
  for (let r = 0; r < rounds; r++) {
    const collector = await readsCollector(url);
    try {
      for (const v of views) {
        cacheDropped = dropOsCache() && cacheDropped;
        times.get(v.name)?.push(await timeRead(collector.origin, v.path));
      }
    } finally {
      await collector.stop();
    }
  }
  return { times, cacheDropped };
}

interface WarmView {
  readonly times: TimedRead[];
  /** CPU milliseconds of the read pool's backends per read. */
  readonly pgCpuMsPerRead: number;
}

async function warmReads(
  collector: ServiceProcess,
  url: string,
  view: ReadView,
  rounds: number,
): Promise<WarmView> {
  for (let i = 0; i < 2; i++) await timeRead(collector.origin, view.path);
  const cpu = new PgBackendCpu(url);
  await cpu.start();
  const times: TimedRead[] = [];
  for (let i = 0; i < rounds; i++) times.push(await timeRead(collector.origin, view.path));
  await cpu.stop();
  const readSeconds = cpu.byPool().get('sluice:read') ?? NaN;
  return { times, pgCpuMsPerRead: (readSeconds * 1000) / rounds };
}

function isText(view: ReadView): boolean {
  return view.path.includes('text=');
}

function viewRow(
  suite: string,
  events: number,
  view: ReadView,
  cold: readonly TimedRead[],
  warm: WarmView,
): BenchRow {
  const ms = (t: readonly TimedRead[]): number[] => t.map((x) => x.ms);
  const warmP95 = quantile(ms(warm.times), 0.95);
  const coldP95 = quantile(ms(cold), 0.95);
  const warmBound = isText(view) ? TEXT_P95_MS : WARM_P95_MS;
  const all = [...cold, ...warm.times];
  const failed = all.find((t) => t.status !== 200);
  return bounded(
    suite,
    `${millions(events)} events: ${view.name}`,
    round(warmP95),
    'ms',
    `p95 ≤ ${warmBound} ms warm, ≤ ${COLD_P95_MS} ms cold`,
    failed === undefined && warmP95 <= warmBound && coldP95 <= COLD_P95_MS,
    {
      warm_p50_ms: round(quantile(ms(warm.times), 0.5)),
      warm_p95_ms: round(warmP95),
      cold_p50_ms: round(quantile(ms(cold), 0.5)),
      cold_p95_ms: round(coldP95),
      pg_cpu_ms_per_read: round(warm.pgCpuMsPerRead),
      answer_kib: round((warm.times[0]?.bytes ?? 0) / 1024),
      status: failed ? `${failed.status} ${failed.error}` : 200,
    },
  );
}

function millions(events: number): string {
  return events >= 1_000_000 ? `${round(events / 1_000_000)}M` : `${round(events / 1000)}k`;
}

export async function runReadsBench(ctx: BenchContext): Promise<BenchRow[]> {
  const d = readsDataset(process.env, ctx.options.quick);
  const plan = planOf(ctx.options.quick, d);
  const suite = readsSuiteName(d, ctx.options.quick);
  const { url, kept, loaded } = await datasetDatabase(ctx.options.adminUrl, d, plan.loadMaxMs, ctx.progress);
  const views = readViews(kept.endMs, d.days);
  const rows: BenchRow[] = [
    figure(suite, `events held (${d.apps} apps, ${d.days} days)`, d.events, 'events', {
      load_s: round(kept.loadSeconds),
      database_mib: Math.round((await storedBytes(url)) / 1024 / 1024),
      loaded_now: loaded ? 'yes' : 'no (kept database reused)',
    }),
  ];
  ctx.progress(`reads: ${plan.coldRounds} cold rounds of ${views.length} views`);
  const cold = await coldReads(url, views, plan.coldRounds);
  if (!cold.cacheDropped) ctx.progress('reads: could not drop the page cache; cold = fresh collector only');
  const onPrimary = new Map<string, BenchRow>();
  const collector = await readsCollector(url);
  try {
    for (const v of views) {
      ctx.progress(`reads: warm, ${v.name}`);
      const warm = await warmReads(collector, url, v, plan.warmRounds);
      const row = viewRow(suite, d.events, v, cold.times.get(v.name) ?? [], warm);
      onPrimary.set(v.name, row);
      rows.push(row);
    }
    rows.push(
      ...(await ingestUnderReads(collector, url, views, {
        suite,
        label: `${millions(d.events)} events`,
        windowMs: plan.ingestMs,
        windowEvents: plan.ingestEvents,
        rounds: plan.ingestRounds,
        progress: ctx.progress,
      })),
    );
  } finally {
    await collector.stop();
  }
  if (standbyRowsWanted(process.env)) {
    rows.push(
      ...(await standbyRows(d, plan, {
        suite,
        label: `${millions(d.events)} events`,
        onPrimary,
        progress: ctx.progress,
      })),
    );
  }
  return rows;
}
