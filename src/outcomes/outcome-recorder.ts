import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Clock } from '../clock';
import type { Logger } from '../log/logger';
import type { OutcomeMetrics } from '../metrics/outcome-instruments';
import type { ClientReport, OutcomeBatch, OutcomeCount } from './outcome';
import { OutcomeTally } from './outcome-tally';

export interface OutcomeRecorderOptions {
  /** `Storage.writeOutcomes`. */
  readonly write: (batch: OutcomeBatch) => Promise<void>;
  /** How often counts are written (milliseconds). Config `SLUICE_OUTCOMES_FLUSH_MS`, default 1000. */
  readonly flushIntervalMs: number;
  /** Most distinct keys held between writes (and while storage is away). Default 50 000. */
  readonly maxKeys?: number;
  /** Most counts (keys) one write takes; more are written in several, one after the other. Default 1000. */
  readonly maxCountsPerWrite?: number;
  /** Most client reports held between writes. Default 10 000. */
  readonly maxReports?: number;
  /** How long `stop` keeps trying to write what is left (milliseconds). Default 5000. */
  readonly stopDeadlineMs?: number;
  readonly clock: Clock;
  readonly metrics: OutcomeMetrics;
  readonly logger: Logger;
}

const STOP_DEADLINE_MS = 5000;
const MAX_COUNTS_PER_WRITE = 1000;
const STOP_RETRY_MS = 250;

/**
 * The loss map's counts that are not decided inside a data transaction (intake decisions, refused
 * rows, dead letters, client reports): summed in memory and written every `flushIntervalMs`, in
 * small transactions of at most `maxCountsPerWrite` counts each. A failed write keeps what it did
 * not write for the next (bounded by `maxKeys` and `maxReports`; past them counts are discarded
 * and counted in `sluice_outcomes_discarded_total`).
 * A process that dies without `stop` loses what it held since the last write: its events then
 * stay `pending` in the loss map (docs/ARCHITECTURE.md, "The loss map").
 */
export class OutcomeRecorder {
  private readonly tally: OutcomeTally;
  private reports = new Map<string, ClientReport>();
  private readonly maxReports: number;
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> | null = null;
  private stopping: Promise<void> | null = null;

  constructor(private readonly o: OutcomeRecorderOptions) {
    this.tally = new OutcomeTally(o.maxKeys ?? 50_000);
    this.maxReports = o.maxReports ?? 10_000;
  }

  count(c: OutcomeCount): void {
    if (!this.tally.add(c)) this.o.metrics.discarded.inc({ kind: 'events' }, c.count);
  }

  /** A client report: written once per id (a resent one is skipped in storage). */
  report(r: ClientReport): void {
    if (this.reports.has(r.id)) return;
    if (this.reports.size >= this.maxReports) {
      this.o.metrics.discarded.inc({ kind: 'reports' });
      return;
    }
    this.reports.set(r.id, r);
    for (const c of r.counts) this.o.metrics.reported.inc({ outcome: c.outcome, reason: c.reason }, c.count);
  }

  /** Idempotent. */
  start(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => void this.flush(), this.o.flushIntervalMs);
    this.timer.unref();
  }

  /** Writes what is held now (waits for a write in flight first). Resolves true when nothing is left. */
  async flush(): Promise<boolean> {
    while (this.writing !== null) await this.writing;
    const counts = this.tally.take();
    const reports = [...this.reports.values()];
    if (counts.length === 0 && reports.length === 0) return true;
    this.reports = new Map();
    let ok = false;
    this.writing = this.writeInParts(counts, reports)
      .then((written) => {
        ok = written;
      })
      .finally(() => {
        this.writing = null;
      });
    await this.writing;
    return ok;
  }

  /**
   * Writes `counts` in batches of at most `maxCountsPerWrite` (the reports with the first), one
   * after the other with a turn of the event loop between two: a synchronous storage (SQLite)
   * holds the event loop for a whole batch, and 50,000 keys in one took a tenth of a second. Each
   * batch is its own transaction, so a failed one keeps only itself and those after it.
   */
  private async writeInParts(
    counts: readonly OutcomeCount[],
    reports: readonly ClientReport[],
  ): Promise<boolean> {
    const part = this.o.maxCountsPerWrite ?? MAX_COUNTS_PER_WRITE;
    for (let from = 0; from === 0 || from < counts.length; from += part) {
      if (from > 0) await yieldToEventLoop();
      const batch = { counts: counts.slice(from, from + part), reports: from === 0 ? reports : [] };
      try {
        await this.o.write({ ...batch, now: this.o.clock.now() });
        this.o.metrics.batches.inc({ result: 'written' });
      } catch (err) {
        this.o.metrics.batches.inc({ result: 'failed' });
        const kept = counts.slice(from);
        this.o.logger.warn(
          { err, counts: kept.length, reports: batch.reports.length },
          'loss-map write failed; kept',
        );
        for (const c of kept) this.count(c);
        for (const r of batch.reports) if (!this.reports.has(r.id)) this.reports.set(r.id, r);
        return false;
      }
    }
    return true;
  }

  /**
   * Stops the timer and writes what is left, retrying for a few seconds. Idempotent: a second call
   * (the forced path of a shutdown while the graceful one is closing) waits for the first.
   */
  stop(): Promise<void> {
    this.stopping ??= this.writeLast();
    return this.stopping;
  }

  private async writeLast(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    const deadline = this.o.clock.now() + (this.o.stopDeadlineMs ?? STOP_DEADLINE_MS);
    while (!(await this.flush())) {
      if (this.o.clock.now() >= deadline) {
        // The only record left of them: the events by outcome, and each drop (an event lost in
        // this process, which nothing else will ever count) with its key.
        const held = this.tally.take();
        const events: Record<string, number> = {};
        for (const c of held) events[c.outcome] = (events[c.outcome] ?? 0) + c.count;
        this.o.logger.error(
          {
            keys: held.length,
            reports: this.reports.size,
            events,
            dropped: held
              .filter((c) => c.outcome === 'dropped')
              .map(({ app, minute, type, reason, count }) => ({ app, minute, type, reason, count })),
          },
          'loss-map counts not written at stop',
        );
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, STOP_RETRY_MS));
    }
  }
}
