/** Best and every result of one variant over alternating rounds. */
export interface VariantRuns<R> {
  readonly best: R;
  /** events/s of each round, in order. */
  readonly runs: readonly number[];
  /** Every round's result, in order. */
  readonly all: readonly R[];
}

/**
 * Runs each variant once per round and keeps each one's best: on a shared box, load that comes
 * and goes then hits every side instead of only the one measured last. The order turns by one
 * each round (A, B, then B, A …), so a side is not always the earlier of its round: over a suite
 * the box's rates drift (the first rounds of a run were 20 % slower than its last), and a side
 * always measured first would be paired with a later, faster other.
 */
export async function alternating<K extends string, R extends { readonly eventsPerSecond: number }>(
  rounds: number,
  variants: Readonly<Record<K, () => Promise<R>>>,
): Promise<Record<K, VariantRuns<R>>> {
  const out = {} as Record<K, { best: R; runs: number[]; all: R[] }>;
  for (let i = 0; i < rounds; i++) {
    const keys = Object.keys(variants) as K[];
    for (const key of keys.map((_, j) => keys[(i + j) % keys.length] as K)) {
      const r = await variants[key]();
      const seen = out[key];
      if (!seen) out[key] = { best: r, runs: [Math.round(r.eventsPerSecond)], all: [r] };
      else {
        seen.runs.push(Math.round(r.eventsPerSecond));
        seen.all.push(r);
        if (r.eventsPerSecond > seen.best.eventsPerSecond) seen.best = r;
      }
    }
  }
  return out;
}
