/**
 * `npm run bench`: every figure of docs/performance.md in one run, each compared with limits and a baseline
 * measured in the same run on the same box. Prints a table, writes bench-results/<ISO>.json and
 * bench-results/latest.json. Exits 0 when every suite ran (targets may be missed: the table says
 * so); non-zero only when the bench itself failed. `BENCH_QUICK=1` shortens every window.
 *
 * A run that is not quick (or any run with `BENCH_RECORD=1`) also records its suites in
 * docs/bench/latest.json, replacing those suites' rows there, and writes docs/performance.md from
 * it (tools/performance-page.ts; a test fails while the two differ).
 */
import os from 'node:os';
import path from 'node:path';
import { readBenchOptions } from './bench-options';
import type { BenchContext } from './context';
import { httpClientKind } from './http-client';
import { LoadMonitor } from './load-monitor';
import { BenchDatabases } from './pg-bench-db';
import { recordReport, writeReport } from './results-file';
import { writePerformancePage } from '../../tools/performance-page/page-files';
import { runClusterBench } from './cluster';
import { runConsoleBench } from './suites/console';
import { runGoodputBench } from './suites/goodput';
import { runListsBench } from './suites/lists';
import { runReadsBench } from './suites/reads';
import { runQueueBench } from './queue';
import { runRateLimitBench } from './suites/ratelimit';
import { runRelayAppsBench } from './suites/relay-apps';
import { runSdkBench } from './sdk';
import { runHeadline } from './suites/headline';
import { runLayout } from './suites/layout';
import { runOpenLoopSuite } from './suites/open-loop';
import { runOtlpBench } from './suites/otlp';
import { runSentryBench } from './suites/sentry';
import { runOverload } from './suites/overload';
import { runOutcomesBench } from './suites/outcomes';
import { runWritePath } from './suites/write-path';
import { runStorageCost } from './suites/storage-cost';
import { runMergeBacklog } from './suites/merge-backlog';
import { runInfluxBaseline } from './suites/influx';
import { runSinglePass } from './suites/single-pass';
import { intakeWorkRow } from './suites/ingest';
import { runInternalsBench } from './suites/internals';
import { runStartupBench } from './suites/startup';
import { formatTable } from './table';
import type { BenchRow } from './types';
import { BodyCorpus, EventGenerator } from './workload';

const RESULTS_FOLDER = path.resolve(__dirname, '..', '..', '..', 'bench-results');
const RECORDED_RESULTS = path.resolve(__dirname, '..', '..', '..', 'docs', 'bench', 'latest.json');

async function main(): Promise<number> {
  const options = readBenchOptions();
  const startedAt = new Date().toISOString();
  const t0 = performance.now();
  const load = new LoadMonitor();
  const progress = (message: string): void => {
    const at = ((performance.now() - t0) / 1000).toFixed(1).padStart(5);
    process.stderr.write(`[bench ${at} s, load ${load.sample().toFixed(2)}] ${message}\n`);
  };
  const databases = new BenchDatabases(options.adminUrl);
  process.once('SIGINT', () => {
    progress('interrupted: dropping bench databases');
    void databases.dropAll().finally(() => process.exit(130));
  });

  progress(`building request bodies${options.quick ? ' (BENCH_QUICK)' : ''}`);
  const ctx: BenchContext = {
    options,
    databases,
    batches: new BodyCorpus(new EventGenerator(1), 100).ensure(options.quick ? 60_000 : 150_000),
    singles: new BodyCorpus(new EventGenerator(2), 1).ensure(options.quick ? 20_000 : 40_000),
    warmup: new BodyCorpus(new EventGenerator(3), 100).ensure(15_000),
    progress,
  };

  const rows: BenchRow[] = [];
  const failures: Array<{ suite: string; error: string }> = [];
  // BENCH_SUITES=ratelimit,queue runs only those suites (a quick re-measurement of one figure).
  const only = process.env.BENCH_SUITES?.split(',').map((x) => x.trim());
  const step = async <T>(suite: string, fn: () => Promise<T>): Promise<T | null> => {
    if (only && !only.includes(suite)) return null;
    try {
      return await fn();
    } catch (err) {
      const error = err instanceof Error ? (err.stack ?? err.message) : String(err);
      failures.push({ suite, error });
      progress(`suite ${suite} FAILED: ${error}`);
      return null;
    }
  };

  try {
    const headline = await step('limits+ingest', () => runHeadline(ctx));
    if (headline) {
      rows.push(...headline.rows);
      const saturation = headline.saturationEventsPerSecond;
      rows.push(...((await step('open-loop', () => runOpenLoopSuite(ctx, saturation))) ?? []));
      rows.push(
        ...((await step('overload', () => runOverload(ctx, saturation, headline.saturationPeakRssMiB))) ??
          []),
      );
    }
    // BENCH_SATURATION=<events/s> with BENCH_SUITES=overload: the overload suite alone, at three
    // times that rate (a re-measurement without the headline's sweeps).
    const givenSaturation = Number(process.env.BENCH_SATURATION ?? NaN);
    if (!headline && Number.isFinite(givenSaturation) && givenSaturation > 0) {
      rows.push(...((await step('overload', () => runOverload(ctx, givenSaturation, NaN))) ?? []));
    }
    // The intake's own work per event, in process (suite `ingest`; BENCH_SUITES=intake-work alone).
    rows.push(...((await step('intake-work', async () => [await intakeWorkRow(ctx)])) ?? []));
    rows.push(...((await step('write-path', () => runWritePath(ctx, headline?.rawCopy ?? null))) ?? []));
    rows.push(...((await step('storage-cost', () => runStorageCost(ctx))) ?? []));
    rows.push(...((await step('merge-backlog', () => runMergeBacklog(ctx))) ?? []));
    rows.push(...((await step('layout', () => runLayout(ctx))) ?? []));
    rows.push(...((await step('outcomes', () => runOutcomesBench(ctx))) ?? []));
    rows.push(...((await step('single-pass', () => runSinglePass(ctx))) ?? []));
    rows.push(...((await step('internals', () => runInternalsBench(ctx))) ?? []));
    rows.push(...((await step('influx', () => runInfluxBaseline(ctx))) ?? []));
    rows.push(...((await step('ratelimit', () => runRateLimitBench(ctx))) ?? []));
    rows.push(...((await step('relay-apps', () => runRelayAppsBench(ctx))) ?? []));
    rows.push(...((await step('otlp', () => runOtlpBench(ctx))) ?? []));
    rows.push(...((await step('sentry', () => runSentryBench(ctx))) ?? []));
    progress('queue');
    rows.push(...((await step('queue', () => runQueueBench())) ?? []));
    progress('cluster');
    rows.push(...((await step('cluster', () => runClusterBench())) ?? []));
    progress('sdk');
    rows.push(...((await step('sdk', () => runSdkBench())) ?? []));
    progress('console');
    rows.push(...((await step('console', () => runConsoleBench(ctx))) ?? []));
    progress('goodput');
    rows.push(...((await step('goodput', () => runGoodputBench(ctx))) ?? []));
    progress('lists');
    rows.push(...((await step('lists', () => runListsBench(ctx))) ?? []));
    progress('reads');
    rows.push(...((await step('reads', () => runReadsBench(ctx))) ?? []));
    progress('startup');
    rows.push(...((await step('startup', () => runStartupBench(ctx))) ?? []));
  } finally {
    await databases.dropAll().catch((err: unknown) => {
      failures.push({ suite: 'cleanup', error: String(err) });
    });
  }

  const loadavg = load.stop();
  const report = {
    startedAt,
    finishedAt: new Date().toISOString(),
    quick: options.quick,
    host: { cpus: os.cpus().length, node: process.version, httpClient: httpClientKind(), loadavg },
    rows,
    failures,
  };
  const file = await writeReport(RESULTS_FOLDER, report);
  const record = !options.quick || process.env.BENCH_RECORD === '1';
  if (record) {
    await recordReport(RECORDED_RESULTS, report);
    writePerformancePage(path.resolve(__dirname, '..', '..', '..'));
  }
  process.stdout.write(`${formatTable(rows)}\n\n`);
  const missed = rows.filter((r) => r.met === false).length;
  const withTarget = rows.filter((r) => r.met !== undefined).length;
  process.stdout.write(
    `targets met: ${withTarget - missed} of ${withTarget}; ` +
      `bytes per event in bodies: ${Math.round(ctx.batches.bytesPerEvent)}; ` +
      `1-min load average ${loadavg.min}–${loadavg.max} (mean ${loadavg.mean}) on ${os.cpus().length} CPUs; ` +
      `run took ${((performance.now() - t0) / 1000).toFixed(0)} s; results in ${path.relative(process.cwd(), file)}` +
      `${record ? ` and ${path.relative(process.cwd(), RECORDED_RESULTS)} (docs/performance.md rewritten)` : ''}\n`,
  );
  for (const f of failures) process.stdout.write(`FAILED ${f.suite}: ${f.error.split('\n')[0]}\n`);
  return failures.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(
      `bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  },
);
