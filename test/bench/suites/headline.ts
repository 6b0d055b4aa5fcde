import type { CopyRunResult } from '../copy-run';
import type { BenchContext } from '../context';
import type { BenchRow } from '../types';
import {
  batchedIngestRows,
  pairedIngestRows,
  parseCopyFloorRows,
  rerunBatchedIngest,
  runParseCopyFloor,
  runSingleEventIngest,
  runSinglePassFloor,
  singleEventRows,
  singlePassFloorRow,
  sweepBatchedIngest,
  type PairedRound,
} from './ingest';
import { measureNaive, measureNullHandler, measureRawCopy, rawCopyChunks, rawCopyRow } from './limits';

export interface HeadlineResult {
  /** The limits (a), (b) (Express and bare node:http), (c), (d), (d′), then batched and single-event ingest against them. */
  readonly rows: readonly BenchRow[];
  /** Row (a), for later suites' ratios. */
  readonly rawCopy: BenchRow;
  /** Best closed-loop stored rate with `SLUICE_ACK=queued`: the saturation the open loops are set from. */
  readonly saturationEventsPerSecond: number;
  /** Collector peak RSS in that best run (MiB): the memory of full load, for the overload row. */
  readonly saturationPeakRssMiB: number;
}

/** Rounds of (raw COPY, batched ingest at the best concurrency), each pair measured back to back. */
const PAIRED_ROUNDS = 3;

/**
 * The rows, ordered so that each ratio's two sides are measured close together in time: other
 * work on a shared box comes and goes, and a baseline taken a minute apart would compare
 * different machines. The batched-ingest ratio is the median over rounds of a raw COPY run and an
 * ingest run at the sweep's best concurrency, back to back; the null handlers' 1-event runs come
 * right before Sluice's (bare node:http last: the single-event target's baseline), and the
 * parse-and-COPY floor (d) right after the paired rounds and among the single-event runs.
 */
export async function runHeadline(ctx: BenchContext): Promise<HeadlineResult> {
  const chunks = rawCopyChunks(ctx);
  const copies: CopyRunResult[] = [await measureRawCopy(ctx, chunks)];
  const nullBatch = await measureNullHandler(ctx, 'express', 100);
  const naive = await measureNaive(ctx);
  const queued = await sweepBatchedIngest(ctx, 'queued');
  const pairs: PairedRound[] = [];
  for (let i = 0; i < (ctx.options.quick ? 1 : PAIRED_ROUNDS); i++) {
    const copy = await measureRawCopy(ctx, chunks);
    copies.push(copy);
    pairs.push({ copy, ingest: await rerunBatchedIngest(ctx, queued.best.concurrency, i) });
  }
  const floorBatched = await runParseCopyFloor(ctx, 100, queued.best.concurrency);
  const floorSinglePass = await runSinglePassFloor(ctx, queued.best.concurrency);
  const stored = await sweepBatchedIngest(ctx, 'stored');
  const nullExpressSingle = await measureNullHandler(ctx, 'express', 1);
  const floorSingle = await runParseCopyFloor(ctx, 1, ctx.options.singleEventConcurrency);
  const nullNodeSingle = await measureNullHandler(ctx, 'node-http', 1);
  const single = await runSingleEventIngest(ctx);

  const rawCopy = rawCopyRow(copies);
  const floors = parseCopyFloorRows(floorBatched, floorSingle, nullNodeSingle);
  return {
    rows: [
      rawCopy,
      nullNodeSingle,
      nullExpressSingle,
      nullBatch,
      naive,
      floors.batched,
      floors.single,
      singlePassFloorRow(floorSinglePass, floorBatched),
      ...pairedIngestRows(queued, pairs, rawCopy, naive, floorBatched, floorSinglePass),
      ...batchedIngestRows('stored', stored, rawCopy, naive),
      ...singleEventRows(single, nullNodeSingle, nullExpressSingle, floors.single),
    ],
    rawCopy,
    saturationEventsPerSecond: queued.best.storedPerSecond,
    saturationPeakRssMiB: queued.best.peakRssMiB,
  };
}
