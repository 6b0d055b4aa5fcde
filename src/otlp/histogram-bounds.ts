/**
 * The min/max fallback of a histogram point that carries neither (docs/otlp.md): the
 * lower bound of the lowest non-empty bucket and the upper bound of the highest one. The open
 * ends (below the first bound, above the last) have no finite bound: there the average stands in,
 * clamped to the bucket's finite side. Without buckets, the average stands in for both. Null when
 * nothing is known (no buckets, no sum).
 */
export function estimateMinMax(
  buckets: { readonly counts: readonly number[]; readonly bounds: readonly number[] } | null,
  avg: number | null,
): { min: number; max: number } | null {
  const { counts = [], bounds = [] } = buckets ?? {};
  const usable = bounds.length > 0 && counts.length === bounds.length + 1 && bounds.every(Number.isFinite);
  if (!usable) return avg === null ? null : { min: avg, max: avg };
  const first = counts.findIndex((c) => c > 0);
  let last = -1;
  for (let i = counts.length - 1; i >= 0; i--) {
    if ((counts[i] ?? 0) > 0) {
      last = i;
      break;
    }
  }
  if (first < 0) return avg === null ? null : { min: avg, max: avg };
  // Bucket i holds (bounds[i-1], bounds[i]]; bucket 0 is (-inf, bounds[0]], the last (bounds[n-1], +inf).
  const lowBound = first === 0 ? null : (bounds[first - 1] as number);
  const highBound = last === bounds.length ? null : (bounds[last] as number);
  const min = lowBound ?? Math.min(avg ?? (bounds[0] as number), bounds[0] as number);
  const max =
    highBound ?? Math.max(avg ?? (bounds[bounds.length - 1] as number), bounds[bounds.length - 1] as number);
  return min <= max ? { min, max } : { min: max, max: min };
}
