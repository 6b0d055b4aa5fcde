import pg from 'pg';
import type { TelemetryEvent } from '../../../src/events/types';
import { columnList, METRIC_SAMPLES } from '../../../src/storage/layout/columns';
import { toMetricSampleRow } from '../../../src/storage/layout/rows';
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
 * queries filter on in one jsonb document. Its primary key and secondary indexes are copied from
 * `metric_samples` as the migrations made it (read from the catalog), with the same daily
 * partitioning, so only the row format differs.
 */
async function createJsonbTable(url: string, now: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const pk = await client.query<{ def: string }>(
      `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint
        WHERE conrelid = 'metric_samples'::regclass AND contype = 'p'`,
    );
    const indexes = await client.query<{ def: string }>(
      `SELECT pg_get_indexdef(i.indexrelid) AS def FROM pg_index i
        WHERE i.indrelid = 'metric_samples'::regclass AND NOT i.indisprimary`,
    );
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
        ${pk.rows[0]?.def ?? 'PRIMARY KEY (ts, id)'}
      ) PARTITION BY RANGE (ts);
      CREATE TABLE bench_events_jsonb_default PARTITION OF bench_events_jsonb DEFAULT;
      ${partitions.join('\n')}`);
    for (const { def } of indexes.rows) {
      // e.g. `CREATE INDEX metric_samples_name_ts ON ONLY public.metric_samples USING btree (name, ts)`
      await client.query(def.replaceAll('metric_samples', 'bench_events_jsonb').replace(' ON ONLY ', ' ON '));
    }
  } finally {
    await client.end();
  }
}

function narrowChunks(events: readonly TelemetryEvent[]): CopyChunk[] {
  const sql = `COPY ${METRIC_SAMPLES.table} (${columnList(METRIC_SAMPLES)}) FROM STDIN`;
  return chunked(events, RAW_COPY_EVENTS_PER_TRANSACTION).map((slice) => ({
    events: slice.length,
    parts: [
      {
        sql,
        payload: copyText(
          slice.map(toMetricSampleRow).map((row) => METRIC_SAMPLES.columns.map((c) => row[c.name])),
        ),
      },
    ],
  }));
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

/** Bytes on disk of a partitioned table: its partitions with their indexes. */
async function tableBytes(url: string, table: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`VACUUM ANALYZE ${table}`);
    const { rows } = await client.query<{ bytes: string | null }>(
      'SELECT sum(pg_total_relation_size(inhrelid)) AS bytes FROM pg_inherits WHERE inhparent = $1::regclass',
      [table],
    );
    return Number(rows[0]?.bytes ?? 0);
  } finally {
    await client.end();
  }
}

async function measure(
  ctx: BenchContext,
  label: string,
  table: string,
  chunks: CopyChunk[],
  setup?: (url: string) => Promise<void>,
) {
  const db = await ctx.databases.fresh(label);
  try {
    if (setup) await setup(db.url);
    const r = await timeCopy(db.url, chunks, ctx.options.copyMaxMs);
    const bytes = await tableBytes(db.url, table);
    return { ...r, bytesPerRow: bytes / r.events };
  } finally {
    await ctx.databases.drop(db);
  }
}

const ROUNDS = 2;

/** Row 9b: metric events by raw COPY into the narrow `metric_samples` versus one jsonb table. */
export async function runLayout(ctx: BenchContext): Promise<BenchRow[]> {
  const rounds = ctx.options.quick ? 1 : ROUNDS;
  const metrics = telemetryEvents(Math.ceil(ctx.options.copyEvents / rounds), STORAGE_SEED + 2).filter(
    (e) => e.type === 'metric',
  );
  ctx.progress(`layout: ${rounds} × ${metrics.length} metric events, narrow table vs jsonb table`);
  const narrowCopy = narrowChunks(metrics);
  const jsonbCopy = jsonbChunks(metrics);
  const { narrow, jsonb } = await alternating(rounds, {
    narrow: () => measure(ctx, 'layout_narrow', 'metric_samples', narrowCopy),
    jsonb: () =>
      measure(ctx, 'layout_jsonb', 'bench_events_jsonb', jsonbCopy, (url) =>
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
      'metrics COPY into narrow metric_samples',
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
