import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Clock } from '../clock';
import type { Logger } from '../log/logger';
import type { OutcomeMetrics } from '../metrics/outcome-instruments';
import type { ClientReport, OutcomeBatch, OutcomeCount } from './outcome';
import { OutcomeTally } from './outcome-tally';
import { writeIsolating, type IsolatedWrite } from './isolating-write';
import { cutText } from '../events/cut-text';

export interface OutcomeRecorderOptions {
  /** `Storage.writeOutcomes`. */
  readonly write: (batch: OutcomeBatch) => Promise<void>;
  /**
   * Whether a failed write was refused for the rows it held (`storage/write-errors.ts`,
   * `isPermanentWriteError`): the batch is then written in halves and only the rows refused alone
   * are dropped (isolating-write.ts). Default: never (every failed write is kept whole).
   */
  readonly isRowFault?: (err: unknown) => boolean;
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
/** Refused keys (and report ids) one log line names; the others are counted. */
const LOGGED_KEYS = 5;
/** An app or a reason in a log line is cut to this many characters. */
const LOGGED_TEXT_LENGTH = 128;
const NEVER = (): boolean => false;

/**
 * The loss map's counts that are not decided inside a data transaction (intake decisions, refused
 * rows, dead letters, client reports): summed in memory and written every `flushIntervalMs`, in
 * small transactions of at most `maxCountsPerWrite` counts each. A failed write keeps what it did
 * not write for the next (bounded by `maxKeys` and `maxReports`; past them counts are discarded
 * and counted in `sluice_outcomes_discarded_total`; a failure is logged once until its reason
 * changes, and the end of failures once).
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
  /** The reason of the failure last logged, while writes keep failing; null while they succeed. */
  private failure: string | null = null;
  /** Writes failed in a row. */
  private failedWrites = 0;

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

  /** Idempotent; does nothing once `stop` was called. */
  start(): void {
    if (this.timer !== null || this.stopping !== null) return;
    this.timer = setInterval(() => void this.flush(), this.o.flushIntervalMs);
    this.timer.unref();
  }

  /** Writes what is held now (waits for a write in flight first). Resolves true when nothing is left. */
  async flush(): Promise<boolean> {
    while (this.writing !== null) await this.writing;
    const counts = this.tally.drain();
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
   * batch is its own transaction, written isolating the rows storage refuses alone
   * (isolating-write.ts), so a failed one keeps only what it did not write and the batches after it.
   */
  private async writeInParts(
    counts: readonly OutcomeCount[],
    reports: readonly ClientReport[],
  ): Promise<boolean> {
    const part = this.o.maxCountsPerWrite ?? MAX_COUNTS_PER_WRITE;
    for (let from = 0; from === 0 || from < counts.length; from += part) {
      if (from > 0) await yieldToEventLoop();
      const batch = { counts: counts.slice(from, from + part), reports: from === 0 ? reports : [] };
      const result = await writeIsolating(
        { ...batch, now: this.o.clock.now() },
        this.o.write,
        this.o.isRowFault ?? NEVER,
      );
      this.dropRefused(result);
      if (result.failure !== undefined) {
        this.failed(
          result.failure,
          [...result.kept.counts, ...counts.slice(from + part)],
          result.kept.reports,
        );
        return false;
      }
      this.o.metrics.batches.inc({ result: 'written' });
    }
    if (this.failure !== null)
      this.o.logger.info({ failedWrites: this.failedWrites }, 'loss-map writes resumed');
    this.failure = null;
    this.failedWrites = 0;
    return true;
  }

  /** Keeps what a failed write did not write for the next, and logs the failure once per reason. */
  private failed(err: unknown, counts: readonly OutcomeCount[], reports: readonly ClientReport[]): void {
    this.o.metrics.batches.inc({ result: 'failed' });
    this.failedWrites++;
    // Written every second while storage is away: one line per reason, not one per attempt.
    const reason = err instanceof Error ? err.message : String(err);
    if (reason !== this.failure) {
      this.o.logger.warn(
        {
          error: reason,
          code: (err as { code?: unknown } | null)?.code,
          failedWrites: this.failedWrites,
          counts: counts.length,
          reports: reports.length,
        },
        'loss-map write failed; kept',
      );
      this.failure = reason;
    }
    for (const c of counts) this.count(c);
    for (const r of reports) if (!this.reports.has(r.id)) this.reports.set(r.id, r);
  }

  /**
   * Counts and logs what storage refused alone (dropped: written again it would be refused again),
   * one line per write however many rows, with the first refusal's error and a few of the keys.
   */
  private dropRefused({ refused, refusal }: IsolatedWrite): void {
    if (refused.counts.length === 0 && refused.reports.length === 0) return;
    let events = 0;
    for (const c of refused.counts) events += c.count;
    if (events > 0) this.o.metrics.refused.inc({ kind: 'events' }, events);
    if (refused.reports.length > 0) this.o.metrics.refused.inc({ kind: 'reports' }, refused.reports.length);
    this.o.logger.error(
      {
        err: refusal,
        counts: refused.counts.length,
        events,
        reports: refused.reports.length,
        reportIds: refused.reports.slice(0, LOGGED_KEYS).map((r) => r.id),
        keys: refused.counts.slice(0, LOGGED_KEYS).map(({ app, minute, type, outcome, reason, count }) => ({
          app: cutText(app, LOGGED_TEXT_LENGTH),
          minute,
          type,
          outcome,
          reason: cutText(reason, LOGGED_TEXT_LENGTH),
          count,
        })),
      },
      'storage refused loss-map counts; dropped them and wrote the rest',
    );
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
        const held = this.tally.drain();
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
