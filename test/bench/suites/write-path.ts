import type { TelemetryEvent } from '../../../src/events/types';
import type { WriteMethod } from '../../../src/storage/postgres';
import { alternating } from '../alternating';
import { chunked } from '../copy-run';
import type { BenchContext } from '../context';
import { benchStorage } from '../pg-bench-db';
import { figure, round, versus } from '../rows';
import { telemetryEvents } from '../telemetry-events';
import type { BenchRow } from '../types';
import { RAW_COPY_EVENTS_PER_TRANSACTION, STORAGE_SEED } from './limits';

const SUITE = 'write-path';
/** The collector's default batch size, as the writer loop takes them. */
const BATCH_EVENTS = RAW_COPY_EVENTS_PER_TRANSACTION;

/** `writeBatch` of default-size batches, one after another, with `method`. */
async function measure(ctx: BenchContext, method: WriteMethod, batches: readonly TelemetryEvent[][]) {
  const db = await ctx.databases.fresh(`write_${method}`);
  const storage = benchStorage(db.url, method);
  try {
    // One batch outside the clock: connects, prepares statements, creates the staging tables.
    const [first, ...rest] = batches;
    if (first) await storage.writeBatch(first);
    let events = 0;
    const started = performance.now();
    for (const batch of rest) {
      if (performance.now() - started > ctx.options.copyMaxMs) break;
      const { inserted } = await storage.writeBatch(batch);
      if (inserted !== batch.length)
        throw new Error(`${method}: ${inserted} of ${batch.length} rows inserted`);
      events += batch.length;
    }
    const elapsed = performance.now() - started;
    return { eventsPerSecond: (events / elapsed) * 1000, events };
  } finally {
    await storage.close();
    await ctx.databases.drop(db);
  }
}

const ROUNDS = 2;

/** Row 9a: the storage's two write paths, in-process, on the same events, in alternating rounds. */
export async function runWritePath(ctx: BenchContext, rawCopy: BenchRow | null): Promise<BenchRow[]> {
  const rounds = ctx.options.quick ? 1 : ROUNDS;
  const perRun = Math.ceil(ctx.options.copyEvents / rounds);
  const batches = chunked(telemetryEvents(perRun + BATCH_EVENTS, STORAGE_SEED + 1), BATCH_EVENTS);
  ctx.progress(`write path: unnest vs copy, ${rounds} × ${batches.length} batches of ${BATCH_EVENTS} each`);
  const runs = await alternating(rounds, {
    unnest: () => measure(ctx, 'unnest', batches),
    copy: () => measure(ctx, 'copy', batches),
  });
  const extra = (method: WriteMethod) => ({
    batch_events: BATCH_EVENTS,
    events: runs[method].best.events,
    runs_events_s: runs[method].runs.join('/'),
  });
  const u = runs.unnest.best.eventsPerSecond;
  const c = runs.copy.best.eventsPerSecond;
  // Against raw COPY: the ceiling of the storage layer alone, with no HTTP in front of it.
  const unnestRow = rawCopy
    ? versus(SUITE, 'writeBatch, unnest', u, 'events/s', rawCopy, undefined, extra('unnest'))
    : figure(SUITE, 'writeBatch, unnest', u, 'events/s', extra('unnest'));
  return [
    unnestRow,
    versus(SUITE, 'writeBatch, copy', c, 'events/s', unnestRow, undefined, {
      ...extra('copy'),
      faster: c > u ? `copy by ${round(c / u)}×` : `unnest by ${round(u / c)}×`,
    }),
  ];
}
