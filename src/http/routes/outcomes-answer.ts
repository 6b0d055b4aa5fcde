import { LossMapTally, lossMapOf, type LossMap, type PendingHorizon } from '../../loss-map/loss-map';
import type { OutcomeRow } from '../../loss-map/outcome';
import { eachInSlices, type NextSlice } from '../../read/read-slices';

/** The loss map of a window, and with `byMinute` one per minute holding counts, oldest first. */
export interface OutcomesAnswer {
  readonly map: LossMap;
  readonly minutes: Array<LossMap & { minute: number }> | null;
}

/**
 * `lossMapOf(rows)` and `lossMapsByMinute(rows)` in slices of the read turns (`eachInSlices`): a
 * month of minutes is a few hundred thousand rows. `rows` come oldest minute first, as
 * `Storage.queryOutcomes` returns them, so each minute is complete when the next one begins.
 */
export async function outcomesAnswer(
  rows: readonly OutcomeRow[],
  horizon: PendingHorizon,
  byMinute: boolean,
  nextSlice: NextSlice,
): Promise<OutcomesAnswer> {
  const tally = new LossMapTally(horizon);
  const minutes: Array<LossMap & { minute: number }> = [];
  let minuteRows: OutcomeRow[] = [];
  const close = (): void => {
    const minute = minuteRows[0]?.minute;
    if (minute === undefined) return;
    tally.addMinute(minute, minuteRows);
    if (byMinute) minutes.push({ minute, ...lossMapOf(minuteRows, horizon) });
    minuteRows = [];
  };
  await eachInSlices(rows, nextSlice, (r) => {
    if (minuteRows.length > 0 && r.minute !== minuteRows[0]?.minute) close();
    minuteRows.push(r);
  });
  close();
  return { map: tally.map, minutes: byMinute ? minutes : null };
}
