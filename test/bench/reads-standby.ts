/**
 * The `reads` suite's readers on a read standby (`SLUICE_DATABASE_READ_URL`): a collector writing to
 * a primary that holds the data set and reading from its streaming-replication standby
 * (reads-standby-pair.ts). Measured: every view warm on the standby, with the CPU of the standby's
 * read backends per read; ingest alone against ingest while 8 readers loop over the views, as the
 * suite measures it on the primary (reads-ingest.ts); where the reads went
 * (`sluice_read_standby_routes_total`); and the CPU the primary's backends spent on reads, which
 * should be none but the standby's lag check (one short query a second).
 */
import { PgBackendCpu } from './pg-backend-cpu';
import { quantile, timeRead, type TimedRead } from './read-timing';
import type { ReadView } from './read-views';
import { readsCollector } from './reads-collector';
import type { ReadsDataset } from './reads-dataset';
import { ingestUnderReads, type IngestUnderReadsOptions } from './reads-ingest';
import { startStandbyPair, type StandbyPair } from './reads-standby-pair';
import { readViews } from './read-views';
import { bounded, figure, round } from './rows';
import type { ServiceProcess } from './service-process';
import type { BenchRow } from './types';

/** The pool names (`application_name`) of the collector's reads on the primary and on the standby. */
const PRIMARY_READS = 'sluice:read';
const STANDBY_READS = 'sluice:read_standby';
/**
 * Most CPU the primary's read backends may spend with every read on the standby (cores): the
 * collector's lag check, one `pg_current_wal_lsn()` a second, measured at 0.001 cores.
 */
const PRIMARY_READ_CORES = 0.005;
/** Longest wait for the collector's first read answered by the standby (milliseconds). */
const FIRST_STANDBY_READ_MS = 60_000;

export interface StandbyPlan {
  readonly warmRounds: number;
  readonly ingestMs: number;
  readonly ingestEvents: number;
  readonly ingestRounds: number;
  readonly loadMaxMs: number;
}

/** `sluice_read_standby_routes_total` by `source/reason` (e.g. `standby/none`), from a `/metrics` text. */
export function routeCounts(metricsText: string): Map<string, number> {
  const out = new Map<string, number>();
  const line = /^sluice_read_standby_routes_total\{source="(\w+)",reason="(\w+)"\} (\S+)$/gm;
  for (const m of metricsText.matchAll(line)) out.set(`${m[1]}/${m[2]}`, Number(m[3]));
  return out;
}

async function routes(origin: string): Promise<Map<string, number>> {
  const res = await fetch(`${origin}/metrics`, { signal: AbortSignal.timeout(5000) });
  return routeCounts(await res.text());
}

/** The counts that grew from `before` to `after`, by how much. */
export function routesSince(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of after) if (v - (before.get(k) ?? 0) > 0) out.set(k, v - (before.get(k) ?? 0));
  return out;
}

/**
 * Whether the reads suite runs its rows with the readers on a standby: `BENCH_READS_STANDBY=1` runs
 * them, `0` leaves them out; unset, they run by default.
 */
export function standbyRowsWanted(env: NodeJS.ProcessEnv): boolean {
  return env.BENCH_READS_STANDBY !== '0';
}

/** Waits until a read of `path` is answered by the standby (the standby has replayed the collector's start). */
async function firstStandbyRead(origin: string, path: string): Promise<void> {
  const deadline = Date.now() + FIRST_STANDBY_READ_MS;
  for (;;) {
    const res = await fetch(`${origin}${path}`, { signal: AbortSignal.timeout(30_000) });
    await res.arrayBuffer();
    const source = res.headers.get('x-sluice-read-source');
    if (source === 'standby') return;
    if (Date.now() > deadline) {
      throw new Error(`reads still answered by "${source}" after ${FIRST_STANDBY_READ_MS} ms`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** CPU seconds of one pool's backends on two servers over a window. */
class PairCpu {
  private readonly onPrimary: PgBackendCpu;
  private readonly onStandby: PgBackendCpu;
  constructor(pair: StandbyPair) {
    this.onPrimary = new PgBackendCpu(pair.url);
    this.onStandby = new PgBackendCpu(pair.standbyUrl);
  }
  async start(): Promise<void> {
    await this.onPrimary.start();
    await this.onStandby.start();
  }
  /** Ends the window: the primary's and the standby's read backends' CPU seconds in it. */
  async stop(): Promise<{ primary: number; standby: number }> {
    await this.onPrimary.stop();
    await this.onStandby.stop();
    return {
      primary: this.onPrimary.byPool().get(PRIMARY_READS) ?? 0,
      standby: this.onStandby.byPool().get(STANDBY_READS) ?? 0,
    };
  }
}

interface ViewOnStandby {
  readonly times: TimedRead[];
  /** Requests of the measured reads answered by the primary, by `primary/<reason>`. */
  readonly fellBack: ReadonlyMap<string, number>;
  readonly standbyCpuMsPerRead: number;
  readonly primaryCpuMsPerRead: number;
}

async function warmOnStandby(
  collector: ServiceProcess,
  pair: StandbyPair,
  view: ReadView,
  rounds: number,
): Promise<ViewOnStandby> {
  for (let i = 0; i < 2; i++) await timeRead(collector.origin, view.path);
  const before = await routes(collector.origin);
  const cpu = new PairCpu(pair);
  await cpu.start();
  const times: TimedRead[] = [];
  for (let i = 0; i < rounds; i++) times.push(await timeRead(collector.origin, view.path));
  const spent = await cpu.stop();
  const went = routesSince(before, await routes(collector.origin));
  return {
    times,
    fellBack: new Map([...went].filter(([k]) => k.startsWith('primary/'))),
    standbyCpuMsPerRead: (spent.standby * 1000) / rounds,
    primaryCpuMsPerRead: (spent.primary * 1000) / rounds,
  };
}

/**
 * One view on the standby: the standby's read backends' CPU per warm read, beside the CPU the same
 * view cost the primary's read backends in this run's warm reads on the primary (`onPrimary`).
 */
function viewRow(
  suite: string,
  label: string,
  view: ReadView,
  v: ViewOnStandby,
  onPrimary?: BenchRow,
): BenchRow {
  const ms = v.times.map((t) => t.ms);
  const failed = v.times.find((t) => t.status !== 200);
  return figure(suite, `${label}: ${view.name}`, round(v.standbyCpuMsPerRead), 'ms CPU per read', {
    warm_p50_ms: round(quantile(ms, 0.5)),
    warm_p95_ms: round(quantile(ms, 0.95)),
    ...(onPrimary?.extra?.pg_cpu_ms_per_read !== undefined && {
      reads_on_primary_cpu_ms: onPrimary.extra.pg_cpu_ms_per_read,
      reads_on_primary_warm_p95_ms: onPrimary.extra.warm_p95_ms ?? NaN,
    }),
    primary_read_cpu_ms: round(v.primaryCpuMsPerRead),
    ...Object.fromEntries([...v.fellBack].map(([k, n]) => [`to_${k.replace('/', '_')}`, n])),
    status: failed ? `${failed.status} ${failed.error}` : 200,
  });
}

function mean(values: readonly number[]): number {
  return values.reduce((s, x) => s + x, 0) / Math.max(1, values.length);
}

export interface StandbyRowsOptions {
  readonly suite: string;
  /** Row name prefix, e.g. `10M events`. */
  readonly label: string;
  /** This run's rows of the views read on the primary, by view name (their CPU is compared). */
  readonly onPrimary: ReadonlyMap<string, BenchRow>;
  readonly progress: (message: string) => void;
}

/** The rows of the readers on a standby of a primary holding data set `d`. */
export async function standbyRows(
  d: ReadsDataset,
  plan: StandbyPlan,
  o: StandbyRowsOptions,
): Promise<BenchRow[]> {
  const label = `${o.label}, reads on a standby`;
  const pair = await startStandbyPair(d, plan.loadMaxMs, o.progress);
  let collector: ServiceProcess | null = null;
  try {
    const views = readViews(pair.kept.endMs, d.days);
    collector = await readsCollector(pair.url, pair.standbyUrl);
    await firstStandbyRead(collector.origin, (views[0] as ReadView).path);
    const before = await routes(collector.origin);
    const whole = new PairCpu(pair);
    await whole.start();
    const t0 = performance.now();
    const rows: BenchRow[] = [];
    const perView: number[] = [];
    for (const v of views) {
      o.progress(`reads, standby: warm, ${v.name}`);
      const measured = await warmOnStandby(collector, pair, v, plan.warmRounds);
      perView.push(measured.standbyCpuMsPerRead);
      rows.push(viewRow(o.suite, label, v, measured, o.onPrimary.get(v.name)));
    }
    const ingest: IngestUnderReadsOptions = {
      suite: o.suite,
      label,
      windowMs: plan.ingestMs,
      windowEvents: plan.ingestEvents,
      rounds: plan.ingestRounds,
      progress: (m) => o.progress(m.replace(/^reads:/, 'reads, standby:')),
      readBackends: { url: pair.standbyUrl, pool: STANDBY_READS },
      // The standby shares this box's two cores with the primary and the collector.
      ratioTarget: null,
    };
    rows.push(...(await ingestUnderReads(collector, pair.url, views, ingest)));
    const seconds = (performance.now() - t0) / 1000;
    const spent = await whole.stop();
    const went = routesSince(before, await routes(collector.origin));
    const onStandby = went.get('standby/none') ?? 0;
    const fellBack = [...went].filter(([k]) => k.startsWith('primary/'));
    const fallbacks = fellBack.reduce((n, [, v]) => n + v, 0);
    const reads = onStandby + fallbacks;
    rows.push(
      figure(
        o.suite,
        `${label}: the standby's read backends, mean over the views`,
        round(mean(perView)),
        'ms CPU per read',
        {
          views: views.length,
          standby_made_s: round(pair.standbySeconds),
          primary_loaded_now: pair.loaded ? 'yes' : 'no (kept cluster reused)',
        },
      ),
      bounded(
        o.suite,
        `${label}: read requests answered by the standby`,
        onStandby,
        'requests',
        'all; none fell back to the primary',
        fallbacks === 0,
        { to_primary: fallbacks, ...Object.fromEntries(fellBack.map(([k, v]) => [k.replace('/', '_'), v])) },
      ),
      bounded(
        o.suite,
        `${label}: the primary's read backends`,
        round(spent.primary / seconds),
        'cores',
        `≤ ${PRIMARY_READ_CORES} (its lag check, one short query a second)`,
        spent.primary / seconds <= PRIMARY_READ_CORES,
        {
          primary_read_cpu_s: round(spent.primary),
          primary_ms_per_read: round((spent.primary * 1000) / Math.max(1, reads)),
          standby_read_cpu_s: round(spent.standby),
          standby_ms_per_read: round((spent.standby * 1000) / Math.max(1, reads)),
          reads,
          over_s: round(seconds),
        },
      ),
    );
    return rows;
  } finally {
    await collector?.stop();
    await pair.close();
  }
}
