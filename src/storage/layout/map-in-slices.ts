import { setImmediate as nextLoopTurn } from 'node:timers/promises';

/** Rows mapped between two turns of the event loop: well under a millisecond of work. */
const ROWS_PER_SLICE = 2000;

/**
 * `rows.map(f)` with a turn of the event loop after every `ROWS_PER_SLICE` rows: a read of a few
 * hundred thousand rows (a month of a loss map) is mapped in slices, never in one stretch.
 */
export async function mapInSlices<T, U>(rows: readonly T[], f: (row: T) => U): Promise<U[]> {
  const out: U[] = new Array<U>(rows.length);
  for (let i = 0; i < rows.length; i++) {
    if (i > 0 && i % ROWS_PER_SLICE === 0) await nextLoopTurn();
    out[i] = f(rows[i] as T);
  }
  return out;
}
