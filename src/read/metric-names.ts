import type { MetricSeriesRow } from '../storage/port';

/**
 * A metric is read back by the name the app wrote. The SDK sends a metric's aggregated samples as
 * `<name>_summary` events (the wire contract keeps that name), so a read of `<name>` takes the rows
 * stored under both names together; each row's shape (a value, or count/min/max/sum) says which
 * it is. A metric that is itself named `<x>_summary` is read with `<x>` too.
 */
export const SUMMARY_SUFFIX = '_summary';

/** The stored names a read of `name` covers. */
export function storedNames(name: string): string[] {
  return [name, `${name}${SUMMARY_SUFFIX}`];
}

/** A metric as the names list shows it: the name an app wrote, and the shapes its rows have. */
export interface MetricName {
  readonly name: string;
  /** `sample` (rows with a value), `summary` (SDK or OTLP summaries); empty when no raw row is left. */
  readonly kinds: Array<'sample' | 'summary'>;
  readonly apps: string[];
}

/** The name an app wrote for a stored series: a summary stored as `<name>_summary` is `<name>`. */
export function writtenName(series: Pick<MetricSeriesRow, 'name' | 'kind'>): string {
  return series.kind === 'summary' && series.name.endsWith(SUMMARY_SUFFIX) && series.name !== SUMMARY_SUFFIX
    ? series.name.slice(0, -SUMMARY_SUFFIX.length)
    : series.name;
}

/** Series merged by written name, names in code-unit order, kinds and apps sorted. */
export function metricNames(series: readonly MetricSeriesRow[]): MetricName[] {
  const byName = new Map<string, { kinds: Set<'sample' | 'summary'>; apps: Set<string> }>();
  for (const s of series) {
    const name = writtenName(s);
    let entry = byName.get(name);
    if (entry === undefined) {
      entry = { kinds: new Set(), apps: new Set() };
      byName.set(name, entry);
    }
    if (s.kind !== null) entry.kinds.add(s.kind);
    entry.apps.add(s.app);
  }
  return [...byName]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, e]) => ({ name, kinds: [...e.kinds].sort(), apps: [...e.apps].sort() }));
}
