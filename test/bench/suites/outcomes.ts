import { alternating } from '../alternating';
import { startCollector } from '../collector-process';
import { BodyCorpus, EventGenerator } from '../workload';
import type { BenchContext } from '../context';
import { bounded, figure, round } from '../rows';
import type { BenchRow } from '../types';
import { chunked } from '../copy-run';
import { telemetryEvents } from '../telemetry-events';
import { median, RAW_COPY_EVENTS_PER_TRANSACTION, STORAGE_SEED } from './limits';
import { runSluiceClosed, type SluiceClosedRun } from './sluice-closed';
import { measureWriteRows } from './write-path';

const SUITE = 'outcomes';
/** Concurrency of the batched runs: the headline's best on the reference box. */
const CONCURRENCY = 16;
/** The loss map may cost at most this share of batched ingest (the target). */
const MAX_COST = 0.02;
/**
 * Events of each run's window (100 a request, each sent once): about 5 s at the rates of the
 * reference box, against 2.7 s for the headline's 150,000.
 */
const WINDOW_EVENTS = 300_000;
/**
 * Events of each run's warm-up. With the headline's 150 requests, V8 was still compiling inside
 * the window: under callgrind, 300 requests after 40 of warm-up cost the collector 4.8 % more
 * instructions with the loss map on, 1.8 % more on its main thread and the rest on V8's background
 * threads; after 400 of warm-up, 0.3 % (0.6 % on the main thread, the background threads equal).
 */
const WARMUP_EVENTS = 100_000;
const WARMUP_MS = 5_000;
const WINDOW_SEED = 26;
const WARMUP_SEED = 27;

/**
 * What counting the loss map costs batched ingest (100-event requests, ack=queued, PostgreSQL): a
 * collector with `SLUICE_OUTCOMES=on` (the default: intake counts, the recorder's batches, the
 * writer's stored counts) against one with it off, on fresh databases, in rounds of the same run
 * (the order turning each round, see alternating.ts); the cost is the median over the rounds of
 * 1 − on ÷ off of the stored rates (each on beside the off of its round, so drift over the suite
 * cancels). The storage's share is measured apart (`runStoredCountCost`). A last row gives the cost in server CPU per stored event (the collector's and the database
 * backends', median of the rounds), which what else runs on the box moves less.
 */
export async function runOutcomesBench(ctx: BenchContext): Promise<BenchRow[]> {
  const rounds = ctx.options.outcomesRounds;
  ctx.progress(`outcomes on vs off, batched ingest, ${rounds} rounds`);
  const bodies = new BodyCorpus(new EventGenerator(WINDOW_SEED), 100).ensure(WINDOW_EVENTS).bodies;
  const warmup = new BodyCorpus(new EventGenerator(WARMUP_SEED), 100).ensure(WARMUP_EVENTS).bodies;
  const run = (variant: 'on' | 'off') => (): Promise<SluiceClosedRun & { eventsPerSecond: number }> =>
    runSluiceClosed(ctx, {
      ack: 'queued',
      concurrency: CONCURRENCY,
      bodies,
      warmup,
      warmupMs: WARMUP_MS,
      label: `outcomes_${variant}`,
      pgCpu: true,
      start: (url) =>
        startCollector({ databaseUrl: url, ack: 'queued', extraEnv: { SLUICE_OUTCOMES: variant } }),
    }).then((r) => ({ ...r, eventsPerSecond: r.storedPerSecond }));
  const runs = await alternating(rounds, { on: run('on'), off: run('off') });
  const on = runs.on.best.eventsPerSecond;
  const off = runs.off.best.eventsPerSecond;
  // Each round's variant beside the off run of the same round: load that drifts over the suite moves both.
  const cost = median(runs.on.runs.map((r, i) => 1 - r / (runs.off.runs[i] ?? NaN)));
  // Server CPU per stored event (collector + database backends), the median of the rounds: CPU
  // time moves less with what else the box runs than a rate does.
  const serverCpu = (k: 'on' | 'off') =>
    median(runs[k].all.map((r) => r.cpuSecondsPerMillion + r.pgCpuSecondsPerMillion));
  const cpuCost = serverCpu('on') / serverCpu('off') - 1;
  const extra = (k: 'on' | 'off') => ({
    concurrency: CONCURRENCY,
    runs_events_s: runs[k].runs.join('/'),
    collector_cpu_s_per_million: runs[k].all.map((r) => round(r.cpuSecondsPerMillion)).join('/'),
    pg_cpu_s_per_million: runs[k].all.map((r) => round(r.pgCpuSecondsPerMillion)).join('/'),
    batch_events: runs[k].all.map((r) => round(r.writer?.meanBatchEvents ?? NaN)).join('/'),
  });
  return [
    ...(await runStoredCountCost(ctx)),
    figure(SUITE, 'batched ingest, SLUICE_OUTCOMES=off', off, 'events/s', extra('off')),
    figure(SUITE, 'batched ingest, SLUICE_OUTCOMES=on', on, 'events/s', extra('on')),
    bounded(
      SUITE,
      'loss map cost: 1 − on ÷ off of batched ingest, median of the rounds',
      round(cost * 100),
      '%',
      `≤ ${MAX_COST * 100} %`,
      cost <= MAX_COST,
      { rounds, best_vs_best_percent: round((off > 0 ? 1 - on / off : NaN) * 100) },
    ),
    figure(SUITE, 'loss map cost: server CPU per stored event, on ÷ off − 1', round(cpuCost * 100), '%', {
      on_cpu_s_per_million: round(serverCpu('on')),
      off_cpu_s_per_million: round(serverCpu('off')),
    }),
  ];
}

/**
 * The database's share: `writeRows` (copy) of default-size batches with and without counting the
 * stored rows (`SLUICE_OUTCOMES=off`: the invalidation log alone is written beside the rows).
 */
async function runStoredCountCost(ctx: BenchContext): Promise<BenchRow[]> {
  const rounds = ctx.options.outcomesRounds;
  const perRun = Math.ceil(ctx.options.copyEvents / rounds);
  const batches = chunked(
    telemetryEvents(perRun + RAW_COPY_EVENTS_PER_TRANSACTION, STORAGE_SEED + 3),
    RAW_COPY_EVENTS_PER_TRANSACTION,
  );
  const runs = await alternating(rounds, {
    without: () => measureWriteRows(ctx, 'copy', batches, '', false),
    with: () => measureWriteRows(ctx, 'copy', batches, ''),
  });
  const w = runs.with.best.eventsPerSecond;
  const wo = runs.without.best.eventsPerSecond;
  const cost = median(runs.with.runs.map((r, i) => 1 - r / (runs.without.runs[i] ?? NaN)));
  return [
    figure(SUITE, 'writeRows, copy, stored rows not counted', wo, 'events/s', {
      runs_events_s: runs.without.runs.join('/'),
    }),
    figure(SUITE, 'writeRows, copy, stored rows counted', w, 'events/s', {
      runs_events_s: runs.with.runs.join('/'),
      cost_percent: round(cost * 100),
      best_vs_best_percent: round((1 - w / wo) * 100),
    }),
  ];
}
