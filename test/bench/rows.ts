import type { BenchRow } from './types';

type Extra = Readonly<Record<string, number | string>>;

/** A row without a target: a figure for the reader. */
export function figure(suite: string, name: string, value: number, unit: string, extra?: Extra): BenchRow {
  return { suite, name, value, unit, ...(extra && { extra }) };
}

/**
 * A row compared with a baseline row of the same run: ratio = value ÷ baseline, met when the ratio
 * reaches `atLeast` (omit it for a comparison without a target).
 */
export function versus(
  suite: string,
  name: string,
  value: number,
  unit: string,
  baseline: BenchRow,
  atLeast?: number,
  extra?: Extra,
): BenchRow {
  const ratio = baseline.value > 0 ? value / baseline.value : NaN;
  return {
    suite,
    name,
    value,
    unit,
    baseline: baseline.name,
    ratio,
    ...(atLeast !== undefined && { target: `ratio ≥ ${atLeast}`, met: ratio >= atLeast }),
    ...(extra && { extra }),
  };
}

/** A row with an absolute target, e.g. `p99 < 10 ms`. */
export function bounded(
  suite: string,
  name: string,
  value: number,
  unit: string,
  target: string,
  met: boolean,
  extra?: Extra,
): BenchRow {
  return { suite, name, value, unit, target, met, ...(extra && { extra }) };
}

/** Rounds for JSON and tables: 3 significant digits below 100, whole numbers above. */
export function round(n: number): number {
  if (!Number.isFinite(n)) return n;
  if (Math.abs(n) >= 100) return Math.round(n);
  return Number(n.toPrecision(3));
}
