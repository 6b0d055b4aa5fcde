import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { TelemetryEvent } from '../../../src/events/types';
import type { BenchContext } from '../context';
import { sampleProcess } from '../proc-stats';
import { figure, round, versus } from '../rows';
import { KEYED_BLOCK_VARIANTS, MERGED_BLOCK_VARIANT } from '../keyed-block-variants';
import { SERIES_BLOCK_VARIANTS } from '../series-block-variants';
import { seriesLookupCost } from '../series-lookup';
import { SERIES_ROW_VARIANTS } from '../series-row-variants';
import {
  BATCH_SAMPLES,
  BLOCK_VARIANTS,
  ROW_VARIANTS,
  type CopyStep,
  type StorageVariant,
  type StorageWorkload,
  type TransactionWrites,
} from '../storage-variants';
import { tagsOnlySamples } from '../tags-only-samples';
import { telemetryEvents } from '../telemetry-events';
import type { BenchRow } from '../types';
import { median, STORAGE_SEED } from './limits';

const SUITE = 'storage-cost';
/** The row variant that is the schema before migration 9 (rows, both triggers): the baseline of every ratio. */
const ROWS_BEFORE_BLOCKS = 'rows: + outcome-count trigger (the rows before migration 9)';
/** The baseline of the tags-only variants' ratios: today's blocks of the same points. */
const TAGS_ONLY_BLOCKS = 'unkeyed blocks (migration 12) (tags-only points)';

interface VariantRun {
  /** Backend CPU per sample (microseconds). */
  readonly cpuUs: number;
  /** Wall time per sample (microseconds). */
  readonly wallUs: number;
  /** `pg_total_relation_size` of the variant's tables and their partitions per sample (bytes). */
  readonly bytes: number;
  /** Samples per stored row. */
  readonly samplesPerRow: number;
}

function copy(client: pg.Client, step: CopyStep): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = client.query(copyFrom(`COPY ${step.table} FROM STDIN${step.format}`));
    stream.on('error', reject);
    stream.on('finish', () => resolve());
    stream.end(step.payload);
  });
}

/** What a variant writes, built before any clock starts. */
interface VariantPayload {
  /** Written after the tables are made, before the clock starts. */
  readonly setup: TransactionWrites | null;
  /** The measured transactions, one per batch. */
  readonly transactions: readonly TransactionWrites[];
}

/** One transaction: its statements before, its COPYs, then its statements. */
async function write(client: pg.Client, tx: TransactionWrites): Promise<void> {
  await client.query('BEGIN');
  for (const sql of tx.before ?? []) await client.query(sql);
  for (const step of tx.copies) await copy(client, step);
  for (const sql of tx.statements) await client.query(sql);
  await client.query('COMMIT');
}

/** Bytes on disk of `table`: its partitions, or the table itself, with indexes and TOAST. */
const tableBytes = (table: string): string =>
  `COALESCE((SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree('${table}')),
            pg_total_relation_size('${table}'))`;

/**
 * One variant in a schema of its own: its tables made, then the samples written in transactions of
 * one collector batch's samples (each transaction's COPYs, then its statements); the CPU of this
 * connection's backend (from /proc: it parses, checks keys, runs the statements, fires the
 * triggers, writes the WAL) and the wall time over the transactions only. Fails when `t` does not
 * hold every sample afterwards.
 */
async function measureVariant(
  client: pg.Client,
  backendPid: number,
  schema: string,
  variant: StorageVariant,
  payload: VariantPayload,
  samples: number,
): Promise<VariantRun> {
  await client.query(`CREATE SCHEMA ${schema}`);
  try {
    await client.query(`SET search_path = ${schema}`);
    await client.query(`SET default_toast_compression = ${variant.compression}`);
    await client.query(variant.ddl);
    if (payload.setup) await write(client, payload.setup);
    const cpu0 = sampleProcess(backendPid).cpuSeconds;
    const t0 = performance.now();
    for (const tx of payload.transactions) await write(client, tx);
    const wall = performance.now() - t0;
    const cpu = sampleProcess(backendPid).cpuSeconds - cpu0;
    const { rows } = await client.query<{ bytes: string; n: string; stored: string }>(
      `SELECT ${variant.tables.map(tableBytes).join(' + ')} AS bytes,
              (SELECT count(*) FROM t) AS n, (SELECT ${variant.storedSamples} FROM t) AS stored`,
    );
    if (Number(rows[0]?.stored) !== samples)
      throw new Error(`storage-cost: ${variant.name} stored ${rows[0]?.stored} of ${samples} samples`);
    return {
      cpuUs: (cpu / samples) * 1e6,
      wallUs: (wall / samples) * 1e3,
      bytes: Number(rows[0]?.bytes ?? 0) / samples,
      samplesPerRow: samples / Number(rows[0]?.n ?? 1),
    };
  } finally {
    await client.query('DISCARD TEMP');
    await client.query('SET search_path = public');
    await client.query(`DROP SCHEMA ${schema} CASCADE`);
  }
}

/**
 * What storing a metric sample costs PostgreSQL, piece by piece: the same samples (the bench's
 * metric events, as the collector writes them, or for the variants that say so the influx suite's
 * tags-only points) COPYed into each way of storing them, in transactions of one collector batch's
 * samples, in rounds (every variant once a round, in order); rows give each variant's median
 * backend CPU per sample, its bytes on disk per sample (table, partitions, indexes and TOAST), and
 * the ratio to the rows before migration 9 (tags-only variants: to today's blocks of the same
 * points). All in one database of its own, dropped afterwards. Last, in process, what a series
 * dictionary's lookup would cost the collector per sample against building today's block payload.
 */
export async function runStorageCost(ctx: BenchContext): Promise<BenchRow[]> {
  const wanted = ctx.options.quick ? 14_000 : 140_000;
  const workloads: Record<StorageWorkload, TelemetryEvent[]> = {
    bench: telemetryEvents(Math.ceil(wanted / 0.6), STORAGE_SEED + 3)
      .filter((e) => e.type === 'metric')
      .slice(0, wanted),
    'tags-only': tagsOnlySamples(wanted, STORAGE_SEED + 4),
  };
  const samples = workloads.bench;
  for (const [w, list] of Object.entries(workloads))
    if (list.length < wanted) throw new Error(`storage-cost: only ${list.length} samples of ${w}`);
  const workloadOf = (v: StorageVariant): StorageWorkload => v.workload ?? 'bench';
  const variants = [
    ...ROW_VARIANTS,
    ...BLOCK_VARIANTS,
    ...KEYED_BLOCK_VARIANTS,
    MERGED_BLOCK_VARIANT,
    ...SERIES_ROW_VARIANTS,
    ...SERIES_BLOCK_VARIANTS,
  ];
  const batchesOf = (list: readonly TelemetryEvent[]): TelemetryEvent[][] => {
    const out: TelemetryEvent[][] = [];
    for (let i = 0; i < list.length; i += BATCH_SAMPLES) out.push(list.slice(i, i + BATCH_SAMPLES));
    return out;
  };
  // Variants of one layout and workload write the same payloads.
  const payloadKey = (v: StorageVariant): string => `${workloadOf(v)}\u0000${v.layout}`;
  const payloads = new Map<string, VariantPayload>();
  for (const v of variants) {
    if (payloads.has(payloadKey(v))) continue;
    const list = workloads[workloadOf(v)];
    payloads.set(payloadKey(v), { setup: v.setup?.(list) ?? null, transactions: v.writes(batchesOf(list)) });
  }
  const rounds = ctx.options.storageRounds;
  const db = await ctx.databases.fresh('storage_cost');
  const client = new pg.Client({ connectionString: db.url });
  client.on('error', () => undefined);
  const runs = new Map<StorageVariant, VariantRun[]>(variants.map((v) => [v, []]));
  try {
    await client.connect();
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const pid = rows[0]?.pid as number;
    for (let r = 0; r < rounds; r++) {
      ctx.progress(
        `storage-cost: round ${r + 1} of ${rounds}, ${variants.length} variants × ${samples.length} samples`,
      );
      for (const [i, v] of variants.entries()) {
        const run = await measureVariant(
          client,
          pid,
          `cost_${i}`,
          v,
          payloads.get(payloadKey(v)) ?? { setup: null, transactions: [] },
          workloads[workloadOf(v)].length,
        );
        runs.get(v)?.push(run);
      }
    }
  } finally {
    await client.end().catch(() => undefined);
    await ctx.databases.drop(db);
  }

  const rowOf = (v: StorageVariant): BenchRow => {
    const list = runs.get(v) ?? [];
    return figure(SUITE, v.name, round(median(list.map((x) => x.cpuUs))), 'µs CPU/sample', {
      bytes_per_sample: round(median(list.map((x) => x.bytes))),
      samples_per_row: round(list[0]?.samplesPerRow ?? NaN),
      wall_us: round(median(list.map((x) => x.wallUs))),
      rounds_us: list.map((x) => round(x.cpuUs)).join('/'),
    });
  };
  const rows = variants.find((v) => v.name === ROWS_BEFORE_BLOCKS);
  if (!rows) throw new Error('storage-cost: no variant of the rows before migration 9');
  const base = rowOf(rows);
  const tagsOnly = variants.find((v) => v.name === TAGS_ONLY_BLOCKS);
  if (!tagsOnly) throw new Error('storage-cost: no variant of today’s blocks of the tags-only points');
  const tagsOnlyBase = rowOf(tagsOnly);
  ctx.progress('storage-cost: the collector’s series lookup against its block payload, in process');
  const collectorRows = (Object.entries(workloads) as [StorageWorkload, TelemetryEvent[]][]).flatMap(
    ([w, list]) => {
      const cost = seriesLookupCost(list, BATCH_SAMPLES);
      const payload = figure(
        SUITE,
        `collector: today’s block payload (${w})`,
        round(cost.blocksUs),
        'µs/sample',
      );
      return [
        payload,
        versus(
          SUITE,
          `collector: series id of each sample from a warm cache (${w})`,
          round(cost.lookupUs),
          'µs/sample',
          payload,
          undefined,
          { series: cost.series },
        ),
      ];
    },
  );
  return [
    figure(SUITE, 'samples COPYed per variant, per transaction', samples.length, 'samples', {
      per_transaction: BATCH_SAMPLES,
      rounds,
    }),
    ...variants.map((v) => {
      const row = rowOf(v);
      if (v === rows) return row;
      const against = workloadOf(v) === 'tags-only' && v !== tagsOnly ? tagsOnlyBase : base;
      const bytesRatio = round(Number(row.extra?.bytes_per_sample) / Number(against.extra?.bytes_per_sample));
      return versus(SUITE, row.name, row.value, row.unit, against, undefined, {
        ...row.extra,
        bytes_ratio: bytesRatio,
      });
    }),
    ...collectorRows,
  ];
}
