/**
 * A process that runs only the scheduler against `SLUICE_DATABASE_URL`, for the multi-process
 * scheduler tests (compiled by `npm run build` to dist/test/support/processes/scheduler-instance.js).
 * Configuration is the collector's own (`SLUICE_*`, e.g. SLUICE_JOB_DOWNSAMPLE_INTERVAL_MS=300),
 * plus test-only variables:
 *
 *   TEST_INSTANCE       id recorded in scheduler_runs (and in the connection's application_name)
 *   TEST_CLOCK_SKEW_MS  added to this process's clock (the database clock is untouched)
 *   TEST_HOLD_JOB       a job name: after that job's work, keep its transaction open ...
 *   TEST_HOLD_MS        ... this long (default 30000), or until its connection fails ...
 *   TEST_HOLD_RUNS      ... for this many runs of the job (default 1)
 *
 * While holding it prints `{"event":"holding",...}` on stdout; it prints `{"event":"started"}` once
 * the timers run. SIGTERM closes the scheduler, prints `{"event":"closed","counters":{…}}` (its
 * scheduler counters) and exits 0.
 */
import { loadConfig } from '../../../src/config/load';
import { createLogger } from '../../../src/log/logger';
import { createSchedulerMetrics } from '../../../src/metrics/scheduler-instruments';
import { Registry } from 'prom-client';
import { createScheduler } from '../../../src/compose/scheduler';
import { schedulerConfigFrom, type Job } from '../../../src/scheduler';

function emit(event: string, fields: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ event, pid: process.pid, ...fields })}\n`);
}

/** Waits `ms`, or less if `signal` aborts. */
function hold(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function holding(inner: Job, holdMs: number, runs: number): Job {
  let left = runs;
  return {
    name: inner.name,
    async run(ctx) {
      const outcome = await inner.run(ctx);
      if (left > 0) {
        left--;
        emit('holding', { job: inner.name, now: ctx.now, rows: outcome.rows });
        await hold(holdMs, ctx.signal);
        emit('released', { job: inner.name, aborted: ctx.signal.aborted });
      }
      return outcome;
    },
  };
}

/** `{ "sluice_scheduler_runs_total{job_name=downsample,result=success}": 12, … }` */
async function counters(registry: Registry): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const metric of await registry.getMetricsAsJSON()) {
    if (!metric.name.endsWith('_total')) continue;
    for (const v of metric.values) {
      const labels = Object.entries(v.labels)
        .map(([k, l]) => `${k}=${String(l)}`)
        .join(',');
      out[`${metric.name}{${labels}}`] = v.value;
    }
  }
  return out;
}

function main(): void {
  const env = process.env;
  const config = loadConfig(env);
  if (config.databaseUrl === null) throw new Error('SLUICE_DATABASE_URL is required');
  const skewMs = Number(env.TEST_CLOCK_SKEW_MS ?? 0);
  const holdJob = env.TEST_HOLD_JOB;
  const holdMs = Number(env.TEST_HOLD_MS ?? 30_000);
  const holdRuns = Number(env.TEST_HOLD_RUNS ?? 1);
  const logger = createLogger(config.logLevel);
  const registry = new Registry();
  const scheduler = createScheduler({
    storage: { kind: 'postgres', connectionString: config.databaseUrl },
    config: schedulerConfigFrom(config),
    clock: { now: () => Date.now() + skewMs },
    logger,
    metrics: createSchedulerMetrics(registry),
    instance: env.TEST_INSTANCE ?? `instance-${process.pid}`,
    jobs: (standard) => standard.map((job) => (job.name === holdJob ? holding(job, holdMs, holdRuns) : job)),
  });
  const keepAlive = setInterval(() => undefined, 1 << 30);
  process.on('SIGTERM', () => {
    void scheduler.close().then(async () => {
      clearInterval(keepAlive);
      emit('closed', { counters: await counters(registry) });
      logger.flush();
      process.exit(0);
    });
  });
  scheduler.start();
  emit('started');
}

main();
