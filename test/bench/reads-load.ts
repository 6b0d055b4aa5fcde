/**
 * Loads the `reads` suite's data set into its database as the collector's writer stores events
 * (the storage's `COPY` path: events, metric blocks and their keys, the writer's records and
 * rollup invalidations), then folds every rollup bucket as the downsample job would and runs
 * `VACUUM ANALYZE`. Events are generated, validated and encoded in process while the previous
 * chunk is being written, so the database and the generator work at the same time.
 */
import pg from 'pg';
import { systemClock } from '../../src/clock';
import { eventLimits } from '../../src/compose/storage';
import { loadConfig } from '../../src/config/load';
import type { EventLimits } from '../../src/events/limits';
import { validateEvent } from '../../src/events/validate';
import { createLogger } from '../../src/log/logger';
import { createPostgresStorage, type PostgresStorage } from '../../src/storage/postgres';
import { foldInvalidatedBuckets } from '../../src/storage/postgres/rollups';
import type { StorageRow } from '../../src/storage/port';
import { runSql } from './pg-bench-db';
import { datasetEvents, datasetStart, type ReadsDataset } from './reads-dataset';

/** Raw retention of the loader's storage and of the suite's collector, so a kept data set stays. */
export const READS_RETENTION_DAYS = 30;
const CHUNK_EVENTS = 20_000;
const FOLD_ENTRIES = 100_000;
const DAY_MS = 86_400_000;
const LIMITS: EventLimits = eventLimits(loadConfig({}));

export interface LoadFigures {
  readonly writeSeconds: number;
  readonly foldSeconds: number;
  readonly vacuumSeconds: number;
}

function openStorage(url: string): PostgresStorage {
  return createPostgresStorage({
    connectionString: url,
    poolSize: 2,
    timeoutMs: 300_000,
    partitionsAheadDays: 3,
    retentionRawMs: READS_RETENTION_DAYS * DAY_MS,
    writeMethod: 'copy',
    outcomes: true,
    clock: systemClock,
    logger: createLogger('silent'),
  });
}

/** Events `from` … `to` of the data set as the storage's rows, validated as at intake at their own time. */
function rowsOf(
  storage: PostgresStorage,
  d: ReadsDataset,
  startMs: number,
  from: number,
  to: number,
): StorageRow[] {
  return datasetEvents(d, startMs, from, to).map((raw) => {
    const v = validateEvent(raw, LIMITS, raw.ts);
    if (!v.ok) throw new Error(`reads data set: an invalid event: ${JSON.stringify(v.rejection)}`);
    return storage.toRow(v.event);
  });
}

async function writeAll(
  storage: PostgresStorage,
  d: ReadsDataset,
  endMs: number,
  maxMs: number,
  progress: (message: string) => void,
): Promise<void> {
  const startMs = datasetStart(d, endMs);
  const started = performance.now();
  let writing: Promise<unknown> = Promise.resolve();
  let reported = 0;
  for (let from = 0; from < d.events; from += CHUNK_EVENTS) {
    const rows = rowsOf(storage, d, startMs, from, from + CHUNK_EVENTS);
    await writing;
    if (performance.now() - started > maxMs) {
      throw new Error(`loading stopped after ${Math.round(maxMs / 1000)} s at ${from} of ${d.events} events`);
    }
    writing = storage.writeRows(rows);
    if (from - reported >= d.events / 10) {
      reported = from;
      const seconds = (performance.now() - started) / 1000;
      progress(`reads: ${from} of ${d.events} events written (${Math.round(from / seconds)} events/s)`);
    }
  }
  await writing;
}

async function foldAll(url: string, endMs: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // Count bound: every invalidation is taken once, FOLD_ENTRIES at a time.
    for (let round = 0; round < 100_000; round++) {
      await client.query('BEGIN');
      const r = await foldInvalidatedBuckets(client, FOLD_ENTRIES, endMs - 3 * DAY_MS);
      await client.query('COMMIT');
      if (r.entries < FOLD_ENTRIES) break;
    }
  } finally {
    await client.end();
  }
}

/**
 * Loads data set `d`, ending at `endMs`, into the empty database at `url` (migrated here). Gives
 * up (rejects) once writing has taken `maxMs`.
 */
export async function loadDataset(
  url: string,
  d: ReadsDataset,
  endMs: number,
  maxMs: number,
  progress: (message: string) => void,
): Promise<LoadFigures> {
  const storage = openStorage(url);
  const t0 = performance.now();
  try {
    await storage.migrate();
    await writeAll(storage, d, endMs, maxMs, progress);
  } finally {
    await storage.close();
  }
  const t1 = performance.now();
  progress('reads: folding rollups');
  await foldAll(url, endMs);
  const t2 = performance.now();
  progress('reads: VACUUM ANALYZE');
  await runSql(url, 'VACUUM ANALYZE');
  const t3 = performance.now();
  return { writeSeconds: (t1 - t0) / 1000, foldSeconds: (t2 - t1) / 1000, vacuumSeconds: (t3 - t2) / 1000 };
}
