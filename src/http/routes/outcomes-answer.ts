import { LossMapTally, lossMapOf, type LossMap, type PendingHorizon } from '../../loss-map/loss-map';
import type { OutcomeRow } from '../../loss-map/outcome';
import { eachInSlices, type NextSlice } from '../../read/read-slices';

/** The loss map of a window, and with `byMinute` one per minute holding counts, oldest first. */
export interface OutcomesAnswer {
  readonly map: LossMap;
  readonly minutes: Array<LossMap & { minute: number }> | null;
}

/**
 * `lossMapOf(rows)` and `lossMapsByMinute(rows)` fed a page of rows at a time, in slices of the
 * read turns (`eachInSlices`): a month of minutes is a few hundred thousand rows, and a paged read
 * (`Storage.queryOutcomes` with `onRows`) hands them on as it reads them, so only the minute being
 * tallied stays. Rows come oldest minute first, as `Storage.queryOutcomes` returns them, so each
 * minute is complete when the next one begins, whichever page it began in.
 */
export class OutcomesTally {
  private readonly tally: LossMapTally;
  private readonly minutes: Array<LossMap & { minute: number }> = [];
  private minuteRows: OutcomeRow[] = [];

  constructor(
    private readonly horizon: PendingHorizon,
    private readonly byMinute: boolean,
    private readonly nextSlice: NextSlice,
  ) {
    this.tally = new LossMapTally(horizon);
  }

  /** Adds the next rows of the read, in its order. */
  readonly add = (rows: readonly OutcomeRow[]): Promise<void> =>
    eachInSlices(rows, this.nextSlice, (r) => {
      if (this.minuteRows.length > 0 && r.minute !== this.minuteRows[0]?.minute) this.close();
      this.minuteRows.push(r);
    });

  /** The answer of every row added. */
  answer(): OutcomesAnswer {
    this.close();
    return { map: this.tally.map, minutes: this.byMinute ? this.minutes : null };
  }

  private close(): void {
    const minute = this.minuteRows[0]?.minute;
    if (minute === undefined) return;
    this.tally.addMinute(minute, this.minuteRows);
    if (this.byMinute) this.minutes.push({ minute, ...lossMapOf(this.minuteRows, this.horizon) });
    this.minuteRows = [];
  }
}
