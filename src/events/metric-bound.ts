import type { MetricSummary } from './types';

/**
 * Largest magnitude of a metric value (`value`, a summary's `min` and `max`; a summary's `sum` may
 * reach `count` times it). Fixed, not a setting: it is what keeps every rollup sum finite. A
 * bucket's sum reaches the end of a double's range (±1.8e308) only past 1.8e8 samples at the
 * bound; stored then as ±Infinity (see src/storage/layout/rollup-folds.ts). No measurement
 * comes near it (the observable universe holds about 1e80 atoms).
 */
export const METRIC_VALUE_BOUND = 1e300;

/** Whether a sample's value keeps rollup sums finite. */
export function isWithinMetricBound(value: number): boolean {
  return Math.abs(value) <= METRIC_VALUE_BOUND;
}

/**
 * The field of a (well-formed) summary past the bound, or null: `min` and `max` within it, `sum`
 * within `count` times it (the sum of `count` samples each within it; `avg` then is too).
 */
export function summaryOutOfRange(s: MetricSummary): 'summary.min' | 'summary.max' | 'summary.sum' | null {
  if (!isWithinMetricBound(s.min)) return 'summary.min';
  if (!isWithinMetricBound(s.max)) return 'summary.max';
  return Math.abs(s.sum) <= s.count * METRIC_VALUE_BOUND ? null : 'summary.sum';
}
