import type { TelemetryEvent } from '../../../src/events/types';
import type { WriteMethod } from '../../../src/storage/postgres';
import { alternating } from '../alternating';
import { chunked } from '../copy-run';
import type { BenchContext } from '../context';
import { benchStorage, runSql } from '../pg-bench-db';
import { figure, round, versus } from '../rows';
import { telemetryEvents } from '../telemetry-events';
import type { BenchRow } from '../types';
import { RAW_COPY_EVENTS_PER_TRANSACTION, STORAGE_SEED } from './limits';
import { writeEvents } from '../../support/storage';

const SUITE = 'write-path';
/** The collector's default batch size, as the writer loop takes them. */
const BATCH_EVENTS = RAW_COPY_EVENTS_PER_TRANSACTION;

/**
 * `writeRows` of default-size batches, one after another, with `method`; `schema` runs after the
 * migrations (to measure the schema as it was before a change); `outcomes`: whether the writes
 * count their stored rows for the loss map (`SLUICE_OUTCOMES`).
 */
export async function measureWriteRows(
  ctx: BenchContext,
  method: WriteMethod,
  batches: readonly TelemetryEvent[][],
  schema?: string,
  outcomes = true,
) {
  const db = await ctx.databases.fresh(`write_${method}`);
  const storage = benchStorage(db.url, method, undefined, outcomes);
  try {
    if (schema !== undefined) {
      await storage.migrate();
      await runSql(db.url, schema);
    }
    // One batch outside the clock: connects, prepares statements, creates the staging tables.
    const [first, ...rest] = batches;
    if (first) await writeEvents(storage, first);
    let events = 0;
    const started = performance.now();
    for (const batch of rest) {
      if (performance.now() - started > ctx.options.copyMaxMs) break;
      const { inserted } = await writeEvents(storage, batch);
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
    unnest: () => measureWriteRows(ctx, 'unnest', batches),
    copy: () => measureWriteRows(ctx, 'copy', batches),
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
    ? versus(SUITE, 'writeRows, unnest', u, 'events/s', rawCopy, undefined, extra('unnest'))
    : figure(SUITE, 'writeRows, unnest', u, 'events/s', extra('unnest'));
  return [
    ...(await runWriteCosts(ctx)),
    unnestRow,
    versus(SUITE, 'writeRows, copy', c, 'events/s', unnestRow, undefined, {
      ...extra('copy'),
      faster: c > u ? `copy by ${round(c / u)}×` : `unnest by ${round(u / c)}×`,
    }),
  ];
}

const WITHOUT_READ_INDEXES = 'DROP INDEX events_name_ts_id; DROP INDEX events_type_ts_id;';

/**
 * Row 9b: what the read API's indexes cost the `copy` write path, against the schema without
 * them, in alternating rounds of the same run. (The rollup invalidation log and the loss map's
 * stored counts are written by the writer itself, in every variant; the outcomes suite measures
 * the loss map's share.)
 */
export async function runWriteCosts(ctx: BenchContext): Promise<BenchRow[]> {
  const rounds = ctx.options.quick ? 1 : ROUNDS + 1;
  const perRun = Math.ceil(ctx.options.copyEvents / rounds);
  const batches = chunked(telemetryEvents(perRun + BATCH_EVENTS, STORAGE_SEED + 2), BATCH_EVENTS);
  ctx.progress(`write costs: read indexes, ${rounds} rounds`);
  const runs = await alternating(rounds, {
    before: () => measureWriteRows(ctx, 'copy', batches, WITHOUT_READ_INDEXES),
    both: () => measureWriteRows(ctx, 'copy', batches, ''),
  });
  const extra = (k: keyof typeof runs) => ({
    batch_events: BATCH_EVENTS,
    events: runs[k].best.events,
    runs_events_s: runs[k].runs.join('/'),
  });
  const before = figure(
    SUITE,
    'writeRows, copy, no read indexes on events',
    runs.before.best.eventsPerSecond,
    'events/s',
    extra('before'),
  );
  const both = versus(
    SUITE,
    'writeRows, copy + read indexes (default)',
    runs.both.best.eventsPerSecond,
    'events/s',
    before,
    undefined,
    extra('both'),
  );
  return [before, both];
}
