import type { MetricSummary } from './types';

/**
 * The field that makes `s` no storable summary, or null when it is one: every number finite,
 * `count` an integer ≥ 1, `min ≤ max`, and `avg` exactly `sum / count` (storage keeps count, min,
 * max and sum and reads avg back as sum / count, so any other avg could not be stored as sent).
 */
export function summaryFault(s: MetricSummary): 'summary' | 'summary.avg' | null {
  const finite =
    Number.isFinite(s.min) && Number.isFinite(s.max) && Number.isFinite(s.sum) && Number.isFinite(s.avg);
  if (!finite || !Number.isSafeInteger(s.count) || s.count < 1 || s.min > s.max) return 'summary';
  return s.avg === s.sum / s.count ? null : 'summary.avg';
}
