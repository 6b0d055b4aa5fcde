import { Registry } from 'prom-client';
import { createLogger } from '../../../src/log/logger';
import { createSchedulerMetrics, type SchedulerMetrics } from '../../../src/metrics/scheduler-instruments';
import { createScheduler } from '../../../src/compose/scheduler';
import type { Job } from '../../../src/scheduler/job';
import type { AttemptResult, RunBackend } from '../../../src/scheduler/run-backend';
import { Scheduler } from '../../../src/scheduler/scheduler';
import type { SchedulerConfig } from '../../../src/scheduler/scheduler-config';
import type { SqliteStorage } from '../../../src/storage/sqlite';

/** The timer logic against a scripted backend; lock and claim are exercised on real databases in test/integration. */
const INTERVAL = 1000;

const job = (name: Job['name']): Job => ({ name, run: async () => ({ rows: 0 }) });

class ScriptedBackend implements RunBackend {
  readonly attempts: Array<{ job: string; at: number }> = [];
  /** Results handed out in order; when empty, every attempt runs. */
  readonly script: Array<AttemptResult | Error | (() => Promise<AttemptResult>)> = [];
  closed = 0;

  async attempt(j: Job): Promise<AttemptResult> {
    this.attempts.push({ job: j.name, at: Date.now() });
    const next = this.script.shift();
    if (next instanceof Error) throw next;
    if (typeof next === 'function') return next();
    return (
      next ?? {
        kind: 'ran',
        slotMs: Date.now(),
        nowMs: Date.now(),
        durationMs: 5,
        outcome: { rows: 3 },
      }
    );
  }

  async close(): Promise<void> {
    this.closed++;
  }
}

async function value(
  metrics: SchedulerMetrics,
  name: keyof SchedulerMetrics,
  labels: Record<string, string>,
) {
  const metric = await metrics[name].get();
  const found = metric.values.find((v) =>
    Object.entries(labels).every(([k, l]) => (v.labels as Record<string, unknown>)[k] === l),
  );
  return found?.value ?? 0;
}

function setup(opts: { skewMs?: number; jobs?: Job[] } = {}) {
  const backend = new ScriptedBackend();
  const metrics = createSchedulerMetrics(new Registry());
  const scheduler = new Scheduler({
    backend,
    jobs: (opts.jobs ?? [job('downsample')]).map((j) => ({ job: j, intervalMs: INTERVAL })),
    clock: { now: () => Date.now() + (opts.skewMs ?? 0) },
    logger: createLogger('silent'),
    metrics,
    random: () => 0,
  });
  return { backend, metrics, scheduler };
}

beforeEach(() => {
  jest.useFakeTimers({ now: Date.UTC(2026, 11, 2, 12, 0, 0, 500) });
});
afterEach(() => {
  expect(jest.getTimerCount()).toBe(0);
  jest.useRealTimers();
});

describe('Scheduler', () => {
  it('attempts once per window, just after it starts on the process clock; start is idempotent', async () => {
    const { backend, scheduler, metrics } = setup();
    scheduler.start();
    scheduler.start();

    await jest.advanceTimersByTimeAsync(3 * INTERVAL);

    expect(backend.attempts.map((a) => a.at % INTERVAL)).toEqual([10, 10, 10]);
    expect(await value(metrics, 'runs', { job_name: 'downsample', result: 'success' })).toBe(3);
    expect(await value(metrics, 'rows', { job_name: 'downsample' })).toBe(9);
    expect(await value(metrics, 'lastSuccess', { job_name: 'downsample' })).toBeGreaterThan(0);
    await scheduler.close();
  });

  it('times attempts by its own (skewed) clock; whether the job runs is for the backend to say', async () => {
    const { backend, scheduler } = setup({ skewMs: 250 });
    scheduler.start();
    await jest.advanceTimersByTimeAsync(2 * INTERVAL);
    // Real time 12:00:00.760 is 12:00:01.010 on the skewed clock.
    expect(backend.attempts.map((a) => a.at % INTERVAL)).toEqual([760, 760]);
    await scheduler.close();
  });

  it('asks again while another instance holds the lock, within the window only', async () => {
    const { backend, scheduler, metrics } = setup();
    backend.script.push(...Array.from({ length: 20 }, () => ({ kind: 'lock_busy' }) as const));
    scheduler.start();

    await jest.advanceTimersByTimeAsync(INTERVAL + 500);
    const first = backend.attempts.length;
    // 125 ms apart from 12:00:01.010 up to the window end.
    expect(first).toBe(8);
    expect(backend.attempts.every((a) => a.at < Date.UTC(2026, 11, 2, 12, 0, 2))).toBe(true);

    backend.script.length = 0;
    backend.script.push({ kind: 'claim_lost', nowMs: 0 });
    await jest.advanceTimersByTimeAsync(INTERVAL);
    expect(backend.attempts).toHaveLength(first + 1);
    expect(await value(metrics, 'lockNotAcquired', { job_name: 'downsample' })).toBe(8);
    expect(await value(metrics, 'claimLost', { job_name: 'downsample' })).toBe(1);
    await scheduler.close();
  });

  it('counts a failed attempt and a failed job as errors, and carries on at the next window', async () => {
    const { backend, scheduler, metrics } = setup();
    backend.script.push(new Error('connection refused'), {
      kind: 'job_failed',
      slotMs: 0,
      nowMs: 0,
      durationMs: 1,
      error: new Error('boom'),
    });
    scheduler.start();
    await jest.advanceTimersByTimeAsync(3 * INTERVAL);
    expect(backend.attempts).toHaveLength(3);
    expect(await value(metrics, 'runs', { job_name: 'downsample', result: 'error' })).toBe(2);
    expect(await value(metrics, 'runs', { job_name: 'downsample', result: 'success' })).toBe(1);
    await scheduler.close();
  });

  it("tells a run's outcome it committed once the backend says it ran, never for a failed attempt", async () => {
    const { backend, scheduler } = setup();
    const told: string[] = [];
    const ran = (label: string): AttemptResult => ({
      kind: 'ran',
      slotMs: 0,
      nowMs: 0,
      durationMs: 1,
      outcome: { rows: 1, committed: () => told.push(label) },
    });
    // A commit that fails makes the attempt throw: the outcome it carried is never told.
    backend.script.push(ran('first'), new Error('commit failed'), ran('third'));
    scheduler.start();
    await jest.advanceTimersByTimeAsync(3 * INTERVAL);
    expect(backend.attempts).toHaveLength(3);
    expect(told).toEqual(['first', 'third']);
    await scheduler.close();
  });

  it('never overlaps two attempts of one job; a tick during a slow run knocks once it ends', async () => {
    const { backend, scheduler } = setup({ jobs: [job('downsample'), job('purge')] });
    let finish!: (r: AttemptResult) => void;
    backend.script.push(() => new Promise((resolve) => (finish = resolve)));
    scheduler.start();

    await jest.advanceTimersByTimeAsync(2 * INTERVAL + 300); // 12:00:02.800
    const downsample = () => backend.attempts.filter((a) => a.job === 'downsample');
    expect(downsample()).toHaveLength(1);
    expect(backend.attempts.filter((a) => a.job === 'purge')).toHaveLength(2);

    // The slow run ends in the window of the skipped ticks: one more attempt at once, not two.
    finish({ kind: 'ran', slotMs: 0, nowMs: 0, durationMs: 1790, outcome: { rows: 0 } });
    await jest.advanceTimersByTimeAsync(0);
    expect(downsample().map((a) => a.at - Date.UTC(2026, 11, 2, 12))).toEqual([1010, 2800]);
    await jest.advanceTimersByTimeAsync(INTERVAL);
    expect(downsample().map((a) => a.at - Date.UTC(2026, 11, 2, 12))).toEqual([1010, 2800, 3010]);
    await scheduler.close();
  });

  it('close clears the timers, waits for the attempt in flight, then closes the backend; idempotent', async () => {
    const { backend, scheduler } = setup();
    let finish!: (r: AttemptResult) => void;
    backend.script.push(() => new Promise((resolve) => (finish = resolve)));
    scheduler.start();
    await jest.advanceTimersByTimeAsync(INTERVAL);
    expect(backend.attempts).toHaveLength(1);

    let closed = false;
    const closing = scheduler.close().then(() => (closed = true));
    expect(scheduler.close()).toBe(scheduler.close());
    await jest.advanceTimersByTimeAsync(5 * INTERVAL);
    expect(closed).toBe(false);
    expect(backend.closed).toBe(0);

    finish({ kind: 'claim_lost', nowMs: 0 });
    await closing;
    expect(backend.closed).toBe(1);
    expect(backend.attempts).toHaveLength(1);
    scheduler.start();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('close during a lock retry stops at once', async () => {
    const { backend, scheduler } = setup();
    backend.script.push({ kind: 'lock_busy' });
    scheduler.start();
    await jest.advanceTimersByTimeAsync(520); // 12:00:01.020: first attempt done, retry due at .135
    expect(backend.attempts).toHaveLength(1);
    await scheduler.close();
    await jest.advanceTimersByTimeAsync(INTERVAL);
    expect(backend.attempts).toHaveLength(1);
  });
});

describe('createScheduler', () => {
  const config: SchedulerConfig = {
    enabled: true,
    intervalsMs: {
      downsample: INTERVAL,
      purge: 0,
      partitions: INTERVAL,
      compact_outcomes: INTERVAL,
      merge_metric_blocks: INTERVAL,
    },
    retentionRawMs: 86_400_000,
    retention1mMs: 86_400_000,
    retention1hMs: 86_400_000,
    partitionsAheadDays: 1,
    jobTimeoutMs: 1000,
    jobLockTimeoutMs: 100,
    purgeBatchSize: 10,
    purgeMaxRowsPerRun: 100,
    compactOutcomesSettleMs: 60_000,
    compactOutcomesMaxRowsPerRun: 100,
    metricResendWindowMs: 120_000,
    outcomes: true,
    connectTimeoutMs: 1000,
  };
  const base = {
    clock: { now: () => Date.now() },
    logger: createLogger('silent'),
    metrics: createSchedulerMetrics(new Registry()),
  };
  const sqlite = { kind: 'sqlite', storage: {} as SqliteStorage } as const;

  it('SLUICE_SCHEDULER=off: start sets no timer', async () => {
    const s = createScheduler({ ...base, storage: sqlite, config: { ...config, enabled: false } });
    s.start();
    expect(jest.getTimerCount()).toBe(0);
    await s.close();
  });

  it('an interval of 0 switches a job off; SQLite has no partitions job', async () => {
    const ran: string[] = [];
    const s = createScheduler({
      ...base,
      storage: sqlite,
      config,
      jobs: (standard) => {
        ran.push(...standard.map((j) => j.name));
        return standard;
      },
    });
    s.start();
    expect(ran).toEqual(['downsample', 'purge', 'compact_outcomes']);
    expect(jest.getTimerCount()).toBe(2);
    await s.close();
  });
});
