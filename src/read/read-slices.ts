import { setImmediate as nextLoopTurn } from 'node:timers/promises';

/**
 * Resolves when a read may do its next slice of work. The collector hands reads turns of their
 * own (`compose/` gives the read routes a `TurnOrder` apart from ingest's), so reads share a
 * bounded slice of each event-loop iteration and never wait in ingest's line. Default: the next
 * turn of the event loop.
 */
export type NextSlice = () => Promise<void>;

export const NEXT_LOOP_TURN: NextSlice = () => nextLoopTurn();

/** Longest one slice of a read's work runs before the read waits for its next turn (milliseconds). */
export const READ_SLICE_MS = 1;

/**
 * Calls `each` on every item in order, in slices of about `READ_SLICE_MS` that each begin with
 * `nextSlice()`: however many items a read holds, it never keeps the event loop for longer than a
 * slice (plus one item). `each` returning false stops the walk. No item: no wait.
 */
export async function eachInSlices<T>(
  items: readonly T[],
  nextSlice: NextSlice,
  each: (item: T, index: number) => boolean | void,
): Promise<void> {
  let i = 0;
  while (i < items.length) {
    await nextSlice();
    const start = performance.now();
    do {
      if (each(items[i] as T, i) === false) return;
      i++;
    } while (i < items.length && performance.now() - start < READ_SLICE_MS);
  }
}
