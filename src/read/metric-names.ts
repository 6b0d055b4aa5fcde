import type { StoredMetricName } from '../storage/port';

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
  /** True when more apps may have written it than `apps` lists. */
  readonly appsCapped: boolean;
}

/** The name an app wrote for a stored series: a summary stored as `<name>_summary` is `<name>`. */
export function writtenName(series: Pick<StoredMetricName, 'name' | 'kind'>): string {
  return series.kind === 'summary' && series.name.endsWith(SUMMARY_SUFFIX) && series.name !== SUMMARY_SUFFIX
    ? series.name.slice(0, -SUMMARY_SUFFIX.length)
    : series.name;
}

function merged(name: string, parts: readonly StoredMetricName[]): MetricName {
  const kinds = new Set<'sample' | 'summary'>();
  const apps = new Set<string>();
  for (const p of parts) {
    if (p.kind !== null) kinds.add(p.kind);
    for (const a of p.apps) apps.add(a);
  }
  return {
    name,
    kinds: [...kinds].sort(),
    apps: [...apps].sort(),
    appsCapped: parts.some((p) => p.appsCapped),
  };
}

/**
 * A page of stored names as the written names they list, in the page's order. `<name>_summary`,
 * when it holds summaries, is listed with `<name>`: where `<name>` has data in the window, on
 * `<name>`'s entry (`<name>` sorts before it, so it is on the same page or an earlier one), else as
 * `<name>` itself. `probe` reads one stored name in the page's window (null: no data there).
 */
export async function writtenNames(
  page: readonly StoredMetricName[],
  probe: (name: string) => Promise<StoredMetricName | null>,
): Promise<MetricName[]> {
  const out: MetricName[] = [];
  for (const stored of page) {
    const written = writtenName(stored);
    if (written !== stored.name) {
      if ((await probe(written)) === null) out.push(merged(written, [stored]));
      continue;
    }
    const summaries = await probe(`${stored.name}${SUMMARY_SUFFIX}`);
    out.push(merged(written, summaries?.kind === 'summary' ? [stored, summaries] : [stored]));
  }
  return out;
}
