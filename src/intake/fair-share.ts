/**
 * The max-min fair level of `capacity` among `demands` (both in one unit: events per second,
 * events held…): the level L at which every demand at or below L is met whole and each larger one
 * gets L, so that the demands' shares add up to `capacity` (Σ min(d, L) = capacity). Infinity when
 * the demands fit in `capacity` together, or when `capacity` is not positive (nothing to share out).
 * This is the share flow-queueing schedulers converge to (fq_codel, deficit round robin): a small
 * flow is served whole, and what a large one is refused is what it sends past the level.
 */
export function maxMinLevel(capacity: number, demands: readonly number[]): number {
  if (!(capacity > 0)) return Infinity;
  const sorted = [...demands].sort((a, b) => a - b);
  let left = capacity;
  for (let i = 0; i < sorted.length; i++) {
    const even = left / (sorted.length - i);
    const demand = sorted[i] as number;
    if (demand > even) return even;
    left -= demand;
  }
  return Infinity;
}
