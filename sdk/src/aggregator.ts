import { sameAttributes, seriesKey } from './attributes';
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
 * The open series of one metric name. Few attribute sets per name is the
 * common case: they are found by comparing attributes, with no key string
 * to build and hash (the hot path of `metric()`). Past `LINEAR_MAX` sets
 * the name switches to a map keyed by `seriesKey`.
 */
interface NameGroup {
  readonly list: OpenSeries[];
  byKey: Map<string, OpenSeries> | undefined;
}

const LINEAR_MAX = 8;

/**
 * Folds metric samples of one name and attribute set within a window into
 * one summary (docs/ARCHITECTURE.md: aggregation). Windows are aligned to multiples of
 * `windowMs` since the epoch, so two processes summarise the same intervals.
 * A sample in a later window than its series' open one closes that window
 * first; `closeEnded` closes windows that time has passed.
 */
export class MetricAggregator {
  private readonly names = new Map<string, NameGroup>();
  private open = 0;
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
    return this.open;
  }

  /** When the earliest open window ends (ms since the epoch), or `Infinity` when none is open. */
  get nextCloseAt(): number {
    return this.earliestEnd;
  }

  /** Adds one sample taken at `ts`. False when the series cap refused it. */
  add(name: string, value: number, attributes: Attributes | undefined, ts: number): boolean {
    const windowStart = ts - (((ts % this.windowMs) + this.windowMs) % this.windowMs);
    let group = this.names.get(name);
    let s = group === undefined ? undefined : find(group, attributes);
    if (s === undefined) {
      if (this.open >= this.maxSeries) return false;
      s = { name, attributes, windowStart, count: 0, min: value, max: value, sum: 0 };
      if (group === undefined) {
        group = { list: [], byKey: undefined };
        this.names.set(name, group);
      }
      insert(group, s);
      this.open++;
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
    const ended: OpenSeries[] = [];
    for (const [name, group] of this.names) {
      const kept = group.list.filter((s) => {
        const end = s.windowStart + this.windowMs;
        if (end <= now) {
          ended.push(s);
          return false;
        }
        if (end < this.earliestEnd) this.earliestEnd = end;
        return true;
      });
      if (kept.length === group.list.length) continue;
      if (kept.length === 0) {
        this.names.delete(name);
        continue;
      }
      group.list.length = 0;
      group.byKey = undefined;
      for (const s of kept) insert(group, s);
    }
    this.open -= ended.length;
    for (const s of ended) this.emit(close(s));
  }

  /** Emits every open series now, windows unfinished (flush, close, page hide). */
  closeAll(): void {
    const open = [...this.names.values()].flatMap((g) => g.list);
    this.names.clear();
    this.open = 0;
    this.earliestEnd = Infinity;
    for (const s of open) this.emit(close(s));
  }
}

function find(group: NameGroup, attributes: Attributes | undefined): OpenSeries | undefined {
  if (group.byKey !== undefined) return group.byKey.get(seriesKey('', attributes));
  const list = group.list;
  for (let i = 0; i < list.length; i++) if (sameAttributes(list[i]!.attributes, attributes)) return list[i];
  return undefined;
}

function insert(group: NameGroup, s: OpenSeries): void {
  group.list.push(s);
  if (group.byKey !== undefined) {
    group.byKey.set(seriesKey('', s.attributes), s);
  } else if (group.list.length > LINEAR_MAX) {
    group.byKey = new Map(group.list.map((x) => [seriesKey('', x.attributes), x]));
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
