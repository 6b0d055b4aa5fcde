import pg from 'pg';
import type { TelemetryEvent } from '../../../src/events/types';
import { toCopyLine } from '../../../src/storage/postgres/copy-encoding';
import { METRIC_BLOCKS_COPY, metricBlocksCopy } from '../../../src/storage/postgres/metric-blocks-copy';
import { copyText } from '../copy-text';
import { alternating } from '../alternating';
import { chunked, timeCopy, type CopyChunk } from '../copy-run';
import type { BenchContext } from '../context';
import { figure, round, versus } from '../rows';
import { telemetryEvents } from '../telemetry-events';
import type { BenchRow } from '../types';
import { RAW_COPY_EVENTS_PER_TRANSACTION, STORAGE_SEED } from './limits';

const SUITE = 'layout';
const DAY_MS = 86_400_000;

/**
 * The alternative layout: one table for every event type, everything but the keys and the columns
 * queries filter on in one jsonb document, a row per event. It is keyed and indexed as metric
 * samples' rows were before migration 9 (primary key `(ts, id)`, index `(name, ts)`), with the
 * same daily partitioning.
 */
async function createJsonbTable(url: string, now: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const today = Math.floor(now / DAY_MS) * DAY_MS;
    const partitions = [-1, 0, 1].map((d) => {
      const from = today + d * DAY_MS;
      const suffix = new Date(from).toISOString().slice(0, 10).replaceAll('-', '');
      return `CREATE TABLE bench_events_jsonb_p${suffix} PARTITION OF bench_events_jsonb
                FOR VALUES FROM (${from}) TO (${from + DAY_MS});`;
    });
    await client.query(`
      CREATE TABLE bench_events_jsonb (
        id uuid NOT NULL,
        ts bigint NOT NULL,
        type text NOT NULL,
        app text NOT NULL,
        name text NOT NULL,
        body jsonb NOT NULL,
        PRIMARY KEY (ts, id)
      ) PARTITION BY RANGE (ts);
      CREATE TABLE bench_events_jsonb_default PARTITION OF bench_events_jsonb DEFAULT;
      ${partitions.join('\n')}
      CREATE INDEX bench_events_jsonb_name_ts ON bench_events_jsonb (name, ts);`);
  } finally {
    await client.end();
  }
}

/** The schema's metric samples: their keys and blocks, binary, as the writer makes them. */
function narrowChunks(events: readonly TelemetryEvent[]): CopyChunk[] {
  return chunked(events, RAW_COPY_EVENTS_PER_TRANSACTION).map((slice) => {
    const blocks = metricBlocksCopy(slice.map((e) => toCopyLine(e).bytes));
    return {
      events: slice.length,
      parts: [{ sql: METRIC_BLOCKS_COPY, payload: [blocks.blocks] }],
    };
  });
}

function jsonbChunks(events: readonly TelemetryEvent[]): CopyChunk[] {
  const sql = 'COPY bench_events_jsonb (id, ts, type, app, name, body) FROM STDIN';
  return chunked(events, RAW_COPY_EVENTS_PER_TRANSACTION).map((slice) => ({
    events: slice.length,
    parts: [
      {
        sql,
        payload: copyText(
          slice.map((e) => [
            e.id,
            e.ts,
            e.type,
            e.app,
            e.name,
            JSON.stringify({
              version: e.version,
              env: e.env,
              value: e.value,
              summary: e.summary,
              message: e.message,
              attributes: e.attributes,
            }),
          ]),
        ),
      },
    ],
  }));
}

/** Bytes on disk of partitioned tables: their partitions with their indexes and TOAST. */
async function tableBytes(url: string, tables: readonly string[]): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`VACUUM ANALYZE ${tables.join(', ')}`);
    const { rows } = await client.query<{ bytes: string | null }>(
      'SELECT sum(pg_total_relation_size(inhrelid)) AS bytes FROM pg_inherits WHERE inhparent = ANY ($1::regclass[])',
      [tables],
    );
    return Number(rows[0]?.bytes ?? 0);
  } finally {
    await client.end();
  }
}

async function measure(
  ctx: BenchContext,
  label: string,
  tables: readonly string[],
  chunks: CopyChunk[],
  setup?: (url: string) => Promise<void>,
) {
  const db = await ctx.databases.fresh(label);
  try {
    if (setup) await setup(db.url);
    const r = await timeCopy(db.url, chunks, ctx.options.copyMaxMs);
    const bytes = await tableBytes(db.url, tables);
    return { ...r, bytesPerRow: bytes / r.events };
  } finally {
    await ctx.databases.drop(db);
  }
}

const ROUNDS = 2;

/** Row 9b: metric events by raw COPY into the schema's blocks versus one jsonb table of rows. */
export async function runLayout(ctx: BenchContext): Promise<BenchRow[]> {
  const rounds = ctx.options.quick ? 1 : ROUNDS;
  const metrics = telemetryEvents(Math.ceil(ctx.options.copyEvents / rounds), STORAGE_SEED + 2).filter(
    (e) => e.type === 'metric',
  );
  ctx.progress(`layout: ${rounds} × ${metrics.length} metric events, narrow table vs jsonb table`);
  const narrowCopy = narrowChunks(metrics);
  const jsonbCopy = jsonbChunks(metrics);
  const { narrow, jsonb } = await alternating(rounds, {
    narrow: () => measure(ctx, 'layout_narrow', ['metric_blocks'], narrowCopy),
    jsonb: () =>
      measure(ctx, 'layout_jsonb', ['bench_events_jsonb'], jsonbCopy, (url) =>
        createJsonbTable(url, Date.now()),
      ),
  });
  const jsonbRow = figure(
    SUITE,
    'metrics COPY into one jsonb table',
    jsonb.best.eventsPerSecond,
    'events/s',
    {
      events: jsonb.best.events,
      bytes_per_row: Math.round(jsonb.best.bytesPerRow),
      runs_events_s: jsonb.runs.join('/'),
    },
  );
  const n = narrow.best.eventsPerSecond;
  const j = jsonb.best.eventsPerSecond;
  const faster = n >= j ? `narrow by ${round(n / j)}×` : `jsonb by ${round(j / n)}×`;
  return [
    jsonbRow,
    versus(
      SUITE,
      'metrics COPY into metric sample keys and blocks',
      narrow.best.eventsPerSecond,
      'events/s',
      jsonbRow,
      undefined,
      {
        events: narrow.best.events,
        bytes_per_row: Math.round(narrow.best.bytesPerRow),
        runs_events_s: narrow.runs.join('/'),
        faster,
      },
    ),
  ];
}
