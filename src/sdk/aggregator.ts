import { seriesKey } from './attributes';
import type { Attributes, MetricSummary } from './types';

/** A closed window of one series, ready to leave as one `<name>_summary` event. */
export interface ClosedSeries {
  /** The metric's name, without the `_summary` suffix. */
  readonly name: string;
  /** Start of the window (ms since the epoch): the summary event's `ts`. */
  readonly windowStart: number;
  readonly attributes: Attributes | undefined;
  readonly summary: MetricSummary;
}

interface OpenSeries {
  readonly name: string;
  readonly attributes: Attributes | undefined;
  windowStart: number;
  count: number;
  min: number;
  max: number;
  sum: number;
}

/**
 * Folds metric samples of one name and attribute set within a window into
 * one summary (DESIGN.md: aggregation). Windows are aligned to multiples of
 * `windowMs` since the epoch, so two processes summarise the same intervals.
 * A sample in a later window than its series' open one closes that window
 * first; `closeEnded` closes windows that time has passed.
 */
export class MetricAggregator {
  private readonly series = new Map<string, OpenSeries>();
  private earliestEnd = Infinity;

  /**
   * @param windowMs window length (milliseconds)
   * @param maxSeries most open series; a sample of a new series past it is refused (sent raw)
   * @param emit receives each closed window
   */
  constructor(
    private readonly windowMs: number,
    private readonly maxSeries: number,
    private readonly emit: (closed: ClosedSeries) => void,
  ) {}

  /** Open series count. */
  get size(): number {
    return this.series.size;
  }

  /** When the earliest open window ends (ms since the epoch), or `Infinity` when none is open. */
  get nextCloseAt(): number {
    return this.earliestEnd;
  }

  /** Adds one sample taken at `ts`. False when the series cap refused it. */
  add(name: string, value: number, attributes: Attributes | undefined, ts: number): boolean {
    const windowStart = ts - (((ts % this.windowMs) + this.windowMs) % this.windowMs);
    const key = seriesKey(name, attributes);
    let s = this.series.get(key);
    if (s === undefined) {
      if (this.series.size >= this.maxSeries) return false;
      s = { name, attributes, windowStart, count: 0, min: value, max: value, sum: 0 };
      this.series.set(key, s);
    } else if (s.windowStart !== windowStart) {
      this.emit(close(s));
      s.windowStart = windowStart;
      s.count = 0;
      s.min = value;
      s.max = value;
      s.sum = 0;
    }
    s.count++;
    s.sum += value;
    if (value < s.min) s.min = value;
    if (value > s.max) s.max = value;
    const end = windowStart + this.windowMs;
    if (end < this.earliestEnd) this.earliestEnd = end;
    return true;
  }

  /** Emits and forgets every series whose window ended at or before `now`. */
  closeEnded(now: number): void {
    if (now < this.earliestEnd) return;
    this.earliestEnd = Infinity;
    for (const [key, s] of this.series) {
      const end = s.windowStart + this.windowMs;
      if (end <= now) {
        this.series.delete(key);
        this.emit(close(s));
      } else if (end < this.earliestEnd) {
        this.earliestEnd = end;
      }
    }
  }

  /** Emits every open series now, windows unfinished (flush, close, page hide). */
  closeAll(): void {
    const open = [...this.series.values()];
    this.series.clear();
    this.earliestEnd = Infinity;
    for (const s of open) this.emit(close(s));
  }
}

function close(s: OpenSeries): ClosedSeries {
  return {
    name: s.name,
    windowStart: s.windowStart,
    attributes: s.attributes,
    summary: { count: s.count, min: s.min, max: s.max, sum: s.sum, avg: s.sum / s.count },
  };
}
