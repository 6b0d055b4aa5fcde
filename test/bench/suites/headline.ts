import type { CopyRunResult } from '../copy-run';
import type { BenchContext } from '../context';
import type { BenchRow } from '../types';
import { batchedIngestRows, runSingleEventIngest, singleEventRow, sweepBatchedIngest } from './ingest';
import { measureNaive, measureNullExpress, measureRawCopy, rawCopyChunks, rawCopyRow } from './limits';

export interface HeadlineResult {
  /** Rows 1–6: the limits (a), (b), (c), then batched and single-event ingest against them. */
  readonly rows: readonly BenchRow[];
  /** Row (a), for later suites' ratios. */
  readonly rawCopy: BenchRow;
  /** Best closed-loop stored rate with `SLUICE_ACK=queued`: the saturation the open loops are set from. */
  readonly saturationEventsPerSecond: number;
  /** Collector peak RSS in that best run (MiB): the memory of full load, for the overload row. */
  readonly saturationPeakRssMiB: number;
}

/**
 * Rows 1–6, ordered so that each ratio's two sides are measured close together in time: other
 * work on a shared box comes and goes, and a baseline taken a minute apart would compare
 * different machines. Raw COPY runs before and after the ingest sweeps (the best counts); the
 * null handler's 1-event run comes right before Sluice's.
 */
export async function runHeadline(ctx: BenchContext): Promise<HeadlineResult> {
  const chunks = rawCopyChunks(ctx);
  const copies: CopyRunResult[] = [await measureRawCopy(ctx, chunks)];
  const nullBatch = await measureNullExpress(ctx, 100);
  const naive = await measureNaive(ctx);
  const queued = await sweepBatchedIngest(ctx, 'queued');
  const stored = await sweepBatchedIngest(ctx, 'stored');
  if (!ctx.options.quick) copies.push(await measureRawCopy(ctx, chunks));
  const nullSingle = await measureNullExpress(ctx, 1);
  const single = await runSingleEventIngest(ctx);

  const rawCopy = rawCopyRow(copies);
  return {
    rows: [
      rawCopy,
      nullSingle,
      nullBatch,
      naive,
      ...batchedIngestRows('queued', queued, rawCopy, naive),
      ...batchedIngestRows('stored', stored, rawCopy, naive),
      singleEventRow(single, nullSingle),
    ],
    rawCopy,
    saturationEventsPerSecond: queued.best.storedPerSecond,
    saturationPeakRssMiB: queued.best.peakRssMiB,
  };
}
