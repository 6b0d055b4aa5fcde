import type { CopyRunResult } from '../copy-run';
import { INTAKE_PARTS, measureIntakeWork } from '../intake-work';
import type { BenchContext } from '../context';
import { ratePerSecond } from '../load-result';
import { round, versus } from '../rows';
import type { BenchRow } from '../types';
import { median, startFloor } from './limits';
import { runSluiceClosed, type SluiceClosedRun } from './sluice-closed';

const SUITE = 'ingest';

/** The best run of a concurrency sweep, and every run's stored rate. */
export interface IngestSweep {
  readonly best: SluiceClosedRun;
  readonly tried: Readonly<Record<string, number>>;
}

function runExtra(r: SluiceClosedRun): Record<string, number | string> {
  const ok = r.load.latencyByStatus.get(202);
  return {
    concurrency: r.concurrency,
    p50_ms: round(ok?.p50 ?? NaN),
    p99_ms: round(ok?.p99 ?? NaN),
    cpu_s_per_M_events: round(r.cpuSecondsPerMillion),
    peak_rss_MiB: round(r.peakRssMiB),
    answered_429: `${round(r.throttledShare * 100)}%`,
    flush_ms: round(r.writer?.meanFlushMs ?? NaN),
    batch_events: Math.round(r.writer?.meanBatchEvents ?? NaN),
    all_stored: r.allStored ? 'yes' : `NO (${r.stored}/${r.accepted})`,
    exit: r.exit.code ?? String(r.exit.signal),
  };
}

/** Batched ingest (100-event requests) at each concurrency in turn, each on a fresh collector and database. */
export async function sweepBatchedIngest(ctx: BenchContext, ack: 'queued' | 'stored'): Promise<IngestSweep> {
  const concurrencies = ack === 'queued' ? ctx.options.queuedConcurrencies : ctx.options.storedConcurrencies;
  const runs: SluiceClosedRun[] = [];
  for (const concurrency of concurrencies) {
    ctx.progress(`batched ingest, ack=${ack}, concurrency ${concurrency}`);
    const run = await runSluiceClosed(ctx, {
      ack,
      concurrency,
      bodies: ctx.batches.bodies,
      label: `ingest_${ack}_${concurrency}`,
    });
    runs.push(run);
    // The corpus is the count bound: grow it (between windows) so the next run is bound by time.
    const sentPerSecond = ratePerSecond(run.load, run.load.sentEvents);
    ctx.batches.ensure(Math.ceil(sentPerSecond * (ctx.options.closedMs / 1000) * 1.5));
  }
  const best = runs.reduce((a, b) => (b.storedPerSecond > a.storedPerSecond ? b : a));
  const tried: Record<string, number> = {};
  for (const r of runs) tried[`c${r.concurrency}_events_s`] = Math.round(r.storedPerSecond);
  return { best, tried };
}

/** A raw COPY run and a batched-ingest run measured right after it. */
export interface PairedRound {
  readonly copy: CopyRunResult;
  readonly ingest: SluiceClosedRun;
}

/** Batched ingest once more at `concurrency` (ack=queued), on a fresh collector and database. */
export function rerunBatchedIngest(
  ctx: BenchContext,
  concurrency: number,
  round: number,
): Promise<SluiceClosedRun> {
  ctx.progress(`batched ingest, ack=queued, concurrency ${concurrency}, paired round ${round + 1}`);
  return runSluiceClosed(ctx, {
    ack: 'queued',
    concurrency,
    bodies: ctx.batches.bodies,
    label: `ingest_paired_${round}`,
  });
}

/**
 * Rows 4 and 5 for ack=queued: the median over paired rounds of stored rate ÷ the raw COPY run
 * right before it (≥ 0.85), and the median stored rate against the naive baseline (context only: on this box 20 × naive exceeds raw COPY). Pairing
 * keeps a slow or fast moment of a shared box on both sides of each ratio.
 */
export function pairedIngestRows(
  sweep: IngestSweep,
  pairs: readonly PairedRound[],
  rawCopy: BenchRow,
  naive: BenchRow,
  floor: SluiceClosedRun,
  singlePassFloor: SluiceClosedRun,
): BenchRow[] {
  const name = 'batched ingest, ack=queued';
  const ratio = median(pairs.map((p) => p.ingest.storedPerSecond / p.copy.eventsPerSecond));
  const value = median(pairs.map((p) => p.ingest.storedPerSecond));
  const target = 0.85;
  const row: BenchRow = {
    suite: SUITE,
    name,
    value,
    unit: 'events/s stored',
    baseline: rawCopy.name,
    ratio,
    target: `ratio ≥ ${target} (median of ${pairs.length} paired rounds)`,
    met: ratio >= target,
    extra: {
      ...runExtra(sweep.best),
      ...sweep.tried,
      paired_ingest_events_s: pairs.map((p) => Math.round(p.ingest.storedPerSecond)).join('/'),
      paired_copy_events_s: pairs.map((p) => Math.round(p.copy.eventsPerSecond)).join('/'),
      paired_ratios: pairs.map((p) => round(p.ingest.storedPerSecond / p.copy.eventsPerSecond)).join('/'),
    },
  };
  return [
    row,
    versus(SUITE, `${name} vs naive`, value, 'events/s stored', naive),
    cpuPerEventRow(pairs, floor, singlePassFloor),
  ];
}

/**
 * Baseline (d), the parse-and-COPY floor, measured as a collector run is (`runSluiceClosed`):
 * 100-event requests at `concurrency` (the batched runs' best), or 1-event requests at the
 * single-event concurrency.
 */
export function runParseCopyFloor(
  ctx: BenchContext,
  perRequest: 1 | 100,
  concurrency: number,
): Promise<SluiceClosedRun> {
  ctx.progress(`(d) parse-and-COPY floor, ${perRequest}-event requests, concurrency ${concurrency}`);
  return runSluiceClosed(ctx, {
    ack: 'queued',
    concurrency,
    bodies: perRequest === 1 ? ctx.singles.bodies : ctx.batches.bodies,
    label: `floor_${perRequest}`,
    start: (url) => startFloor('parse-copy', url),
  });
}

/**
 * Baseline (d′), the single-pass floor: (d) with the collector's single pass instead of
 * `JSON.parse`, 100-event requests, in the same closed loop as the collector.
 */
export function runSinglePassFloor(ctx: BenchContext, concurrency: number): Promise<SluiceClosedRun> {
  ctx.progress(`(d′) single-pass floor, 100-event requests, concurrency ${concurrency}`);
  return runSluiceClosed(ctx, {
    ack: 'queued',
    concurrency,
    bodies: ctx.batches.bodies,
    label: 'floor_single_pass',
    start: (url) => startFloor('single-pass', url),
  });
}

/** A floor run's figures beside its rate: concurrency, latency, whether all it acknowledged was stored. */
function floorExtra(r: SluiceClosedRun): Record<string, number | string> {
  const ok = r.load.latencyByStatus.get(202);
  return {
    concurrency: r.concurrency,
    p50_ms: round(ok?.p50 ?? NaN),
    p99_ms: round(ok?.p99 ?? NaN),
    all_stored: r.allStored ? 'yes' : `NO (${r.stored}/${r.accepted})`,
  };
}

/** The row of baseline (d′): what HTTP, the single pass and COPY cost by themselves, per event. */
export function singlePassFloorRow(r: SluiceClosedRun, floor: SluiceClosedRun): BenchRow {
  return {
    suite: 'limits',
    name: '(d′) single-pass floor, 100-event requests',
    value: r.storedPerSecond,
    unit: 'events/s stored',
    extra: {
      ...floorExtra(r),
      cpu_us_per_event: round(r.cpuSecondsPerMillion),
      times_floor_d_cpu: round(r.cpuSecondsPerMillion / floor.cpuSecondsPerMillion),
    },
  };
}

/** Rows of baseline (d): what HTTP, `JSON.parse` and COPY text cost by themselves, per event and per request. */
export function parseCopyFloorRows(
  batched: SluiceClosedRun,
  single: SluiceClosedRun,
  nullNode: BenchRow,
): { readonly batched: BenchRow; readonly single: BenchRow } {
  return {
    batched: {
      suite: 'limits',
      name: '(d) parse-and-COPY floor, 100-event requests',
      value: batched.storedPerSecond,
      unit: 'events/s stored',
      extra: { ...floorExtra(batched), cpu_us_per_event: round(batched.cpuSecondsPerMillion) },
    },
    single: versus(
      'limits',
      '(d) parse-and-COPY floor, 1-event requests',
      single.answeredPerSecond,
      'req/s',
      nullNode,
      undefined,
      {
        ...floorExtra(single),
        cpu_us_per_request: Math.round(single.cpuSecondsPerMillion),
      },
    ),
  };
}

/** Most collector CPU a stored event may cost (µs, batched, ack=queued). */
const CPU_PER_EVENT_TARGET_US = 3;

/**
 * The collector's CPU per stored event (user + system, all threads), median of the paired rounds,
 * with the floors beside it: (d), parse-and-COPY, the least any collector here spends, and (d′),
 * the least a collector built on the single pass spends.
 */
function cpuPerEventRow(
  pairs: readonly PairedRound[],
  floor: SluiceClosedRun,
  singlePassFloor: SluiceClosedRun,
): BenchRow {
  const value = median(pairs.map((p) => p.ingest.cpuSecondsPerMillion));
  return {
    suite: SUITE,
    name: 'collector CPU per stored event, batched, ack=queued',
    value,
    unit: 'µs/event',
    target: `≤ ${CPU_PER_EVENT_TARGET_US} µs (median of ${pairs.length} paired rounds)`,
    met: value <= CPU_PER_EVENT_TARGET_US,
    extra: {
      rounds_us: pairs.map((p) => round(p.ingest.cpuSecondsPerMillion)).join('/'),
      floor_d_us: round(floor.cpuSecondsPerMillion),
      times_floor: round(value / floor.cpuSecondsPerMillion),
      floor_single_pass_us: round(singlePassFloor.cpuSecondsPerMillion),
      times_single_pass_floor: round(value / singlePassFloor.cpuSecondsPerMillion),
    },
  };
}

/** Rows 4 and 5 for ack=stored: the best stored rate against raw COPY (≥ 0.75) and against the naive baseline (context, no target). */
export function batchedIngestRows(
  ack: 'queued' | 'stored',
  sweep: IngestSweep,
  rawCopy: BenchRow,
  naive: BenchRow,
): BenchRow[] {
  const name = `batched ingest, ack=${ack}`;
  const value = sweep.best.storedPerSecond;
  const extra = { ...runExtra(sweep.best), ...sweep.tried };
  return [
    versus(SUITE, name, value, 'events/s stored', rawCopy, 0.75, extra),
    versus(SUITE, `${name} vs naive`, value, 'events/s stored', naive),
  ];
}

/** Single-event requests, closed loop, ack=queued. */
export function runSingleEventIngest(ctx: BenchContext): Promise<SluiceClosedRun> {
  const concurrency = ctx.options.singleEventConcurrency;
  ctx.progress(`single-event requests, ack=queued, concurrency ${concurrency}`);
  return runSluiceClosed(ctx, {
    ack: 'queued',
    concurrency,
    bodies: ctx.singles.bodies,
    label: 'ingest_single',
  });
}

/**
 * Single-event requests/s against the bare `node:http` null handler (≥ 0.5: the platform is what a
 * user compares with), and against null Express and the parse-and-COPY floor (context, no target).
 */
export function singleEventRows(
  run: SluiceClosedRun,
  nullNode: BenchRow,
  nullExpress: BenchRow,
  floor: BenchRow,
): BenchRow[] {
  const name = 'single-event requests, ack=queued';
  const value = run.answeredPerSecond;
  return [
    versus(SUITE, name, value, 'req/s', nullNode, 0.5, {
      ...runExtra(run),
      cpu_us_per_request: Math.round(run.cpuSecondsPerMillion),
      stored_events_s: Math.round(run.storedPerSecond),
    }),
    versus(SUITE, `${name} vs null Express`, value, 'req/s', nullExpress),
    versus(SUITE, `${name} vs the (d) floor`, value, 'req/s', floor),
  ];
}

/** Most intake work an event may cost at 100 events a request (µs): lanes, limiter, advice, counts. */
const INTAKE_WORK_TARGET_US = 1;

/**
 * The intake's per-request work per event, in process (`intake-work.ts`): 100 valid events a
 * request through every part a collector runs, each part's share beside it (the difference it made
 * when added to the parts before it).
 */
export async function intakeWorkRow(ctx: BenchContext): Promise<BenchRow> {
  ctx.progress('intake work per event, in process, 100-event requests');
  const requests = ctx.options.quick ? 500 : 2000;
  const work = await measureIntakeWork(100, requests, ctx.options.quick ? 3 : 7);
  const value = work['loss map'];
  const extra: Record<string, number> = { requests_per_round: requests };
  let before = 0;
  for (const part of INTAKE_PARTS) {
    extra[`${part.replace(' ', '_')}_us`] = round(work[part] - before);
    before = work[part];
  }
  return {
    suite: SUITE,
    name: 'intake work per event, 100-event requests (in process)',
    value,
    unit: 'µs/event',
    target: `< ${INTAKE_WORK_TARGET_US} µs`,
    met: value < INTAKE_WORK_TARGET_US,
    extra,
  };
}
