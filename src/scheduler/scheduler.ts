import type { Clock } from '../clock';
import type { Logger } from '../log/logger';
import type { SchedulerMetrics } from '../metrics/scheduler-instruments';
import type { Job } from './job';
import type { AttemptResult, RunBackend } from './run-backend';
import { delayToNextSlot, lockRetryDelay, slotStart } from './slots';

export interface ScheduledJob {
  readonly job: Job;
  /** Window length (milliseconds), > 0. */
  readonly intervalMs: number;
}

export interface SchedulerLoopOptions {
  readonly backend: RunBackend;
  readonly jobs: readonly ScheduledJob[];
  /** Process clock: when attempts happen. It never decides whether a job runs (the claim does). */
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: SchedulerMetrics;
  /** 0..1, for the spread of attempt times. Default Math.random. */
  readonly random?: () => number;
}

interface Loop {
  readonly job: Job;
  readonly intervalMs: number;
  timer: NodeJS.Timeout | null;
  inFlight: Promise<void> | null;
  /** A tick came while an attempt was in flight: attempt again as soon as it settles. */
  deferred: boolean;
  /** Wakes a pending lock retry early (on close). */
  wake: (() => void) | null;
}

/**
 * The timers: one loop per job, one attempt per window just after it starts (process clock), and
 * while another instance holds the lock, a few more attempts within the window. Never two
 * attempts of one job at once in this process. A failing attempt is counted and logged; the next
 * window tries again.
 */
export class Scheduler {
  private readonly loops: Loop[];
  private started = false;
  private closing: Promise<void> | null = null;

  constructor(private readonly o: SchedulerLoopOptions) {
    this.loops = o.jobs.map((j) => ({ ...j, timer: null, inFlight: null, deferred: false, wake: null }));
  }

  /** Idempotent; does nothing once closing. */
  start(): void {
    if (this.started || this.closing) return;
    this.started = true;
    for (const loop of this.loops) {
      this.o.metrics.interval.set({ job_name: loop.job.name }, loop.intervalMs / 1000);
      this.schedule(loop);
    }
    this.o.logger.info(
      { jobs: this.loops.map((l) => ({ job: l.job.name, intervalMs: l.intervalMs })) },
      'scheduler started',
    );
  }

  /** Idempotent. Clears every timer, waits for the attempts in flight, then releases connections. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const loop of this.loops) {
        if (loop.timer) clearTimeout(loop.timer);
        loop.timer = null;
        loop.wake?.();
      }
      await Promise.all(this.loops.map((l) => l.inFlight));
      await this.o.backend.close();
    })();
    return this.closing;
  }

  private schedule(loop: Loop): void {
    if (this.closing) return;
    const random = this.o.random ?? Math.random;
    const delay = delayToNextSlot(this.o.clock.now(), loop.intervalMs, random());
    loop.timer = setTimeout(() => this.tick(loop), delay);
    loop.timer.unref();
  }

  private tick(loop: Loop): void {
    loop.timer = null;
    if (this.closing) return;
    this.attemptNow(loop);
    this.schedule(loop);
  }

  /**
   * Starts an attempt, unless one is in flight (a slow run overlapping the next window): then one
   * more attempt follows as soon as it settles, so this instance still knocks in the window it
   * ticked for if time is left (the claim decides, as always).
   */
  private attemptNow(loop: Loop): void {
    if (loop.inFlight) {
      loop.deferred = true;
      return;
    }
    loop.inFlight = this.attemptWindow(loop).finally(() => {
      loop.inFlight = null;
      if (loop.deferred && !this.closing) {
        loop.deferred = false;
        this.attemptNow(loop);
      }
    });
  }

  private async attemptWindow(loop: Loop): Promise<void> {
    const { clock } = this.o;
    const windowEnd = slotStart(clock.now(), loop.intervalMs) + loop.intervalMs;
    const retryMs = lockRetryDelay(loop.intervalMs);
    for (;;) {
      let result: AttemptResult;
      try {
        result = await this.o.backend.attempt(loop.job, loop.intervalMs);
      } catch (err) {
        this.o.metrics.runs.inc({ job_name: loop.job.name, result: 'error' });
        this.o.logger.warn({ err, job: loop.job.name }, 'job attempt failed; the next interval retries');
        return;
      }
      this.record(loop, result);
      if (result.kind !== 'lock_busy') return;
      // The holder may be finishing an earlier window, or may die: ask again while this window lasts.
      if (this.closing || clock.now() + retryMs >= windowEnd) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, retryMs);
        timer.unref();
        loop.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      loop.wake = null;
      if (this.closing) return;
    }
  }

  private record(loop: Loop, result: AttemptResult): void {
    const { metrics, logger } = this.o;
    const job = loop.job.name;
    logger.trace({ job, result: result.kind, at: this.o.clock.now() }, 'job attempt');
    switch (result.kind) {
      case 'lock_busy':
        metrics.lockNotAcquired.inc({ job_name: job });
        return;
      case 'claim_lost':
        metrics.claimLost.inc({ job_name: job });
        return;
      case 'ran':
        metrics.runs.inc({ job_name: job, result: 'success' });
        metrics.runDuration.observe({ job_name: job }, result.durationMs / 1000);
        metrics.rows.inc({ job_name: job }, result.outcome.rows);
        if (result.outcome.skipped) metrics.skipped.inc({ job_name: job }, result.outcome.skipped);
        metrics.lastSuccess.set({ job_name: job }, this.o.clock.now() / 1000);
        result.outcome.committed?.();
        logger.debug(
          {
            job,
            slotMs: result.slotMs,
            durationMs: result.durationMs,
            rows: result.outcome.rows,
            ...result.outcome.detail,
          },
          'job ran',
        );
        return;
      case 'job_failed':
        metrics.runs.inc({ job_name: job, result: 'error' });
        metrics.runDuration.observe({ job_name: job }, result.durationMs / 1000);
        logger.warn(
          { err: result.error, job, slotMs: result.slotMs },
          'job failed; rolled back and recorded',
        );
        return;
    }
  }
}
