/** Best and every result of one variant over alternating rounds. */
export interface VariantRuns<R> {
  readonly best: R;
  /** events/s of each round, in order. */
  readonly runs: readonly number[];
  /** Every round's result, in order. */
  readonly all: readonly R[];
}

/**
 * Runs each variant once per round, alternating (A, B, A, B …), and keeps each one's best: on a
 * shared box, load that comes and goes then hits both sides instead of only the one measured last.
 */
export async function alternating<K extends string, R extends { readonly eventsPerSecond: number }>(
  rounds: number,
  variants: Readonly<Record<K, () => Promise<R>>>,
): Promise<Record<K, VariantRuns<R>>> {
  const out = {} as Record<K, { best: R; runs: number[]; all: R[] }>;
  for (let i = 0; i < rounds; i++) {
    for (const key of Object.keys(variants) as K[]) {
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
