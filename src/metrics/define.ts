import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * One line per instrument: its name, help text and label names (a bounded set, always: label
 * values come from code, never from a request). The instrument files list what the collector
 * measures; these say how an instrument is made.
 */
export function counter<L extends string = never>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[] = [],
): Counter<L> {
  return new Counter({ name, help, labelNames, registers: [registry] });
}

/** A gauge; `collect` runs before each scrape (to read a value held elsewhere). */
export function gauge<L extends string = never>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[] = [],
  collect?: () => void,
): Gauge<L> {
  return new Gauge({ name, help, labelNames, registers: [registry], ...(collect && { collect }) });
}

/** A histogram with explicit bucket bounds (in the unit of the name: seconds, events, …). */
export function histogram<L extends string = never>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
  buckets: readonly number[],
): Histogram<L> {
  return new Histogram({ name, help, labelNames, buckets: [...buckets], registers: [registry] });
}
