import type { EventType } from './types';

/**
 * Why the SDK lost an event before any collector took it (the loss map's `sdk` stage,
 * docs/sdk.md "Client reports"). `unsent_at_exit`: still buffered when `close()` ended without
 * a persistence store.
 */
export type ReportDropReason =
  'sampled' | 'buffer_full' | 'invalid' | 'client_error' | 'closed' | 'unsent_at_exit';

/** One row of a client report: deltas of one (app, minute, type) since the previous report. */
export interface ReportRow {
  app: string;
  /** Start of the UTC minute of the events' `ts` (ms). */
  minute: number;
  type: EventType;
  captured: number;
  /** Taken by a collector (2xx, or neither throttled nor rejected in a 429). */
  delivered: number;
  dropped: Partial<Record<ReportDropReason, number>>;
  /** Rejected by a collector, by its reason. */
  rejected: Record<string, number>;
  /**
   * Samples of aggregated metrics lost before they were folded into a summary (refused at capture,
   * captured after `close()`), by reason: counted in samples, apart from the events above (a
   * summary is one event however many samples it folds). Absent when there are none.
   */
  dropped_samples?: Partial<Record<ReportDropReason, number>>;
}

/** A report as sent in the `report` member of a request body; counted once per `id`. */
export interface WireReport {
  readonly id: string;
  readonly rows: readonly ReportRow[];
}

/** Most rows one report carries; the rest wait for the next. */
const MAX_ROWS = 256;
const MINUTE_MS = 60_000;

/**
 * What the SDK reports of the events it captured (docs/sdk.md, "Client reports"): deltas per
 * (minute, type), cut into reports. One report is outstanding at a time and goes, with the same id,
 * on every request until a collector has read a body holding it; deltas counted meanwhile wait for
 * the next report. Both survive a restart with the persistence store (`state` / `restore`).
 */
export class ClientReports {
  private rows = new Map<string, ReportRow>();
  private outstanding: WireReport | null = null;

  constructor(
    private readonly app: string,
    private readonly newId: () => string,
  ) {}

  /** True when something is not yet reported. */
  get unsent(): boolean {
    return this.outstanding !== null || this.rows.size > 0;
  }

  captured(type: EventType, ts: number, n = 1): void {
    this.row(type, ts).captured += n;
  }

  delivered(type: EventType, ts: number): void {
    this.row(type, ts).delivered++;
  }

  dropped(reason: ReportDropReason, type: EventType, ts: number): void {
    const r = this.row(type, ts);
    r.dropped[reason] = (r.dropped[reason] ?? 0) + 1;
  }

  /** A sample of an aggregated metric lost before it was folded (counted in samples). */
  droppedSample(reason: ReportDropReason, ts: number): void {
    const r = this.row('metric', ts);
    const samples = (r.dropped_samples ??= {});
    samples[reason] = (samples[reason] ?? 0) + 1;
  }

  rejected(reason: string, type: EventType, ts: number): void {
    const r = this.row(type, ts);
    r.rejected[reason] = (r.rejected[reason] ?? 0) + 1;
  }

  /** The report the next request carries (null when there is nothing to report). */
  next(): WireReport | null {
    if (this.outstanding === null && this.rows.size > 0) {
      const rows = [...this.rows.values()].slice(0, MAX_ROWS);
      for (const r of rows) this.rows.delete(key(r.type, r.minute));
      this.outstanding = { id: this.newId(), rows };
    }
    return this.outstanding;
  }

  /** A collector read the body that carried `report`: it is counted; the next report may start. */
  taken(report: WireReport): void {
    if (this.outstanding === report) this.outstanding = null;
  }

  /** What the persistence store keeps. */
  state(): { outstanding: WireReport | null; rows: ReportRow[] } {
    return { outstanding: this.outstanding, rows: [...this.rows.values()] };
  }

  /** Adds what a previous run saved (its outstanding report keeps its id). */
  restore(saved: unknown): void {
    const s = saved as { outstanding?: WireReport | null; rows?: ReportRow[] } | null;
    if (typeof s !== 'object' || s === null) return;
    if (this.outstanding === null && isReport(s.outstanding)) this.outstanding = s.outstanding;
    for (const r of Array.isArray(s.rows) ? s.rows : []) {
      if (!isRow(r)) continue;
      const mine = this.row(r.type, r.minute);
      mine.captured += r.captured;
      mine.delivered += r.delivered;
      for (const [k, v] of Object.entries(r.dropped)) {
        const reason = k as ReportDropReason;
        mine.dropped[reason] = (mine.dropped[reason] ?? 0) + (v ?? 0);
      }
      for (const [k, v] of Object.entries(r.rejected)) mine.rejected[k] = (mine.rejected[k] ?? 0) + v;
      for (const [k, v] of Object.entries(r.dropped_samples ?? {})) {
        const reason = k as ReportDropReason;
        const samples = (mine.dropped_samples ??= {});
        samples[reason] = (samples[reason] ?? 0) + (v ?? 0);
      }
    }
  }

  private row(type: EventType, ts: number): ReportRow {
    const minute = ts - (((ts % MINUTE_MS) + MINUTE_MS) % MINUTE_MS);
    const k = key(type, minute);
    let r = this.rows.get(k);
    if (r === undefined) {
      r = { app: this.app, minute, type, captured: 0, delivered: 0, dropped: {}, rejected: {} };
      this.rows.set(k, r);
    }
    return r;
  }
}

function key(type: string, minute: number): string {
  return `${minute}:${type}`;
}

function isRow(r: unknown): r is ReportRow {
  const x = r as ReportRow | null;
  return (
    typeof x === 'object' &&
    x !== null &&
    typeof x.type === 'string' &&
    Number.isSafeInteger(x.minute) &&
    Number.isSafeInteger(x.captured) &&
    Number.isSafeInteger(x.delivered) &&
    typeof x.dropped === 'object' &&
    typeof x.rejected === 'object'
  );
}

function isReport(r: unknown): r is WireReport {
  const x = r as WireReport | null;
  return (
    typeof x === 'object' &&
    x !== null &&
    typeof x.id === 'string' &&
    Array.isArray(x.rows) &&
    x.rows.every(isRow)
  );
}
