import type { ClientReport, OutcomeBatch, OutcomeCount } from './outcome';

/*
 * One row must not stop the loss map's writes for every app: when storage refuses a batch for
 * the rows it holds (a value a column or an index cannot take), the batch is halved until the
 * refused rows are alone; those are dropped and handed back, and the rest are written, as the
 * writer loop (writer/write-with-retry.ts) and the rollup job (storage/fold-isolation.ts) do.
 * A count and a client report are the units: a report's id and its counts go in one transaction.
 * k refused units among n cost O(k · log n) writes. Any other failure (storage away, a timeout)
 * is not the rows': what is not written yet is handed back to be kept for the next write.
 */

/** Counts and client reports of a batch. */
export type OutcomeUnits = Pick<OutcomeBatch, 'counts' | 'reports'>;

/** What one isolating write did with a batch's units. */
export interface IsolatedWrite {
  /** Units storage refused alone: dropped. */
  readonly refused: OutcomeUnits;
  /** The error of the first unit refused alone; undefined when none was. */
  readonly refusal: unknown;
  /** Units not written because of a failure that is not theirs: to be kept and written again. */
  readonly kept: OutcomeUnits;
  /** The failure that left `kept`; undefined when everything was written or refused. */
  readonly failure: unknown;
}

type Unit = { readonly count: OutcomeCount } | { readonly report: ClientReport };

function batchOf(units: readonly Unit[], now: number): OutcomeBatch {
  const counts: OutcomeCount[] = [];
  const reports: ClientReport[] = [];
  for (const u of units) {
    if ('count' in u) counts.push(u.count);
    else reports.push(u.report);
  }
  return { counts, reports, now };
}

/**
 * Writes `batch` with `write`; when it fails and `isRowFault` says the rows were refused, writes
 * it in halves, down to single units, so that only the units storage refuses alone are dropped.
 */
export async function writeIsolating(
  batch: OutcomeBatch,
  write: (batch: OutcomeBatch) => Promise<void>,
  isRowFault: (err: unknown) => boolean,
): Promise<IsolatedWrite> {
  const units: Unit[] = [
    ...batch.counts.map((count) => ({ count })),
    ...batch.reports.map((report) => ({ report })),
  ];
  const refused: Unit[] = [];
  let refusal: unknown;
  // Ranges of `units` still to write, the next one last.
  const pending: Array<{ readonly from: number; readonly to: number }> = [{ from: 0, to: units.length }];
  for (let range = pending.pop(); range !== undefined; range = pending.pop()) {
    const part = units.slice(range.from, range.to);
    try {
      // The first write is the batch as given (its arrays unchanged), the halves are new ones.
      await write(part.length === units.length ? batch : batchOf(part, batch.now));
    } catch (err) {
      if (!isRowFault(err)) {
        const kept = batchOf([...part, ...pending.flatMap((r) => units.slice(r.from, r.to))], batch.now);
        return { refused: batchOf(refused, batch.now), refusal, kept, failure: err };
      }
      if (part.length === 1) {
        refused.push(...part);
        refusal ??= err;
        continue;
      }
      const mid = range.from + ((range.to - range.from) >> 1);
      pending.push({ from: mid, to: range.to }, { from: range.from, to: mid });
    }
  }
  return {
    refused: batchOf(refused, batch.now),
    refusal,
    kept: { counts: [], reports: [] },
    failure: undefined,
  };
}
